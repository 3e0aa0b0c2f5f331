"""Realistic text for the search benchmarks (bench/search.py, bench/scale.py): a vocabulary of
English and German words with Zipf frequencies, rare words, and documents made of them."""

from __future__ import annotations

import itertools
import random

ENGLISH = """
account address agreement amount annual answer application appointment approval april
arrival article assessment assistance attachment august balance bank benefit bill board
booking branch budget building business calendar cancellation capital card case certificate
change charge claim client closing company complaint condition confirmation contact contract
copy cost council country court coverage credit customer damage date deadline debit december
delivery department deposit description design detail director discount district doctor
document draft driver employee employer energy engineer entry estimate event evidence example
expense export february fee file finance form freight friday fund garden government guarantee
health heating history holiday hospital house income information insurance interest invoice
item january job july june key kitchen labour land lease letter licence limit loan manager
march market may meeting member message method mileage monday month mortgage name notice
november number october office order owner package page parcel partner payment pension period
permit phone plan policy position premium price product profit project property purchase
quantity quarter question rate receipt record reference refund region registration reminder
rent repair report request reservation result return revenue review salary sale saturday
schedule school service settlement share shipment signature statement station storage street
subscription summary sunday supplier support survey tax teacher telephone tenant term thursday
ticket total training transfer travel treatment tuesday unit update usage user value vehicle
vendor warranty water wednesday week work year annual approved complete current due early
final general monthly net new official open overdue paid pending personal previous private
public quarterly received regular remaining signed special standard total urgent valid weekly
yearly accept add apply arrange attach book calculate cancel check confirm deliver describe
enclose extend forward include inform issue manage notify order pay provide receive refer
register remind renew replace request return review send settle ship sign submit transfer
update verify
""".split()
GERMAN = """
Abrechnung Absender Adresse Angebot Anhang Anlage Anmeldung Anschrift Antrag Antwort Arbeit
Arbeitgeber Arzt Auftrag Ausgabe Auszahlung Auto Bank Beitrag Bescheid Bescheinigung
Bestätigung Bestellung Betrag Betreff Betrieb Bewerbung Bezahlung Bürgeramt Datum Dienst
Dokument Druck Eingang Einkommen Einnahme Einzug Empfänger Ende Entwurf Erklärung Erstattung
Fahrzeug Familie Finanzamt Firma Forderung Formular Frist Führerschein Gebühr Gehalt Gemeinde
Genehmigung Gericht Geschäft Gesundheit Gewinn Grundstück Gutschrift Gutachten Haftpflicht
Handwerker Haus Haushalt Heizung Hinweis Höhe Jahr Kasse Kauf Kaution Kellerraum Kind
Kindergeld Kosten Krankenkasse Kredit Kunde Kündigung Leistung Lieferung Lohn Mahnung Miete
Mieter Mitglied Monat Nachweis Nebenkosten Nummer Nutzung Öffnungszeiten Ort Pflege Police
Post Praxis Preis Prüfung Quittung Rate Rechnung Reise Rente Reparatur Rückzahlung Schaden
Schreiben Schule Sozialversicherung Steuer Strom Stunde Summe Tarif Termin Überweisung
Umzug Unterlagen Unterschrift Urlaub Verbrauch Vereinbarung Verein Verfahren Vergütung
Verlängerung Vermieter Vermögen Versicherung Vertrag Vollmacht Vorgang Vorschuss Wasser
Wohnung Zahlung Zählerstand Zeitraum Zeugnis Zins Zulage Zusage Zuschuss
aktuell allgemein amtlich bar beglichen bezahlt dringend einmalig fällig gültig jährlich
monatlich offen persönlich pünktlich schriftlich sofort überfällig vierteljährlich vorläufig
zusätzlich zuständig abschließen anfordern beantragen begleichen bestätigen bezahlen einreichen
erhalten erstatten kündigen mahnen prüfen senden überweisen unterschreiben verlängern
zahlen zustellen
""".split()
FUNCTION_WORDS = """the of and to in for on with by at from this that is are was be as your our
we you it not or please der die das und zu den mit von für ist im auf dem nicht ein eine des
Sie wir Ihre unser bitte""".split()


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Function words first (the most frequent), then real words, then German compounds and
    English plurals until `size` words; the content words in random order."""
    words = list(dict.fromkeys(ENGLISH + GERMAN))
    nouns = [word for word in GERMAN if word[0].isupper()]
    known = set(words) | set(FUNCTION_WORDS)
    while len(words) + len(FUNCTION_WORDS) < size:
        if rng.random() < 0.75:
            first, second = rng.sample(nouns, 2)
            joint = "s" if first.endswith(("ung", "heit", "keit", "ion", "tät", "schaft")) else ""
            word = first + joint + second.lower()
        else:
            word = rng.choice(ENGLISH) + "s"
        if word not in known:
            known.add(word)
            words.append(word)
    rng.shuffle(words)
    return (FUNCTION_WORDS + words)[:size]


def rare_words(count: int, known: set[str], rng: random.Random) -> list[str]:
    """Made-up words of four consonant-vowel syllables (`kavomitu`): none is a real word, a
    vocabulary word, or (all being 8 letters) a prefix of another."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: dict[str, None] = {}
    while len(words) < count:
        word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(4))
        if word not in known:
            words[word] = None
    return list(words)


class TextGenerator:
    """Texts and titles. The Zipf weights are cumulated once: random.choices with weights= would
    cumulate them again at every call."""

    def __init__(self, words: list[str], rare: list[str], seed: int):
        self.words = words
        self.content = words[len(FUNCTION_WORDS):]
        self.rare = rare
        self.cumulative = list(itertools.accumulate(1 / rank for rank in range(1, len(words) + 1)))
        self.rng = random.Random(seed)

    def text(self, count: int) -> tuple[str, str]:
        """(the text, the rare word in it)."""
        chosen = self.rng.choices(self.words, cum_weights=self.cumulative, k=count)
        rare = self.rng.choice(self.rare)
        chosen.insert(self.rng.randrange(count + 1), rare)
        return " ".join(chosen) + ".", rare

    def title(self) -> str:
        return " ".join(self.rng.choices(self.content, k=2)) + \
            f" {self.rng.randrange(2000, 2026)}-{self.rng.randrange(1, 13):02d}"
