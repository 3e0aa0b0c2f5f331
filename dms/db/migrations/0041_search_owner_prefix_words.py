"""PostgreSQL: each owner's words of 7 letters join their list of words (issue 47).

A query word longer than the stored beginnings (5 letters) is a prefix. to_tsquery's `:*` makes
GIN gather the postings of every word that begins with it, of every owner: with 1,000 owners,
most of a two-word search's time (bench/RESULTS.md, 2026-12-02). dms.search.postgres now
matches the owner's own words that begin with it instead, as whole words: it reads them from
`search_owner_word`, which held the owner's words of 8 letters or more (those with inner parts,
migration 0039). The words that begin with a prefix of 6 letters or more and are longer have 7
letters or more: those of 7 now join the list too (their parts do not: a word shorter than 8
letters has none, dms.search.terms.MIN_COMPOUND).

The owners' words of 7 letters already in the search rows are added here, once: every row's
words are read (minutes at a million documents).
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    if not isinstance(db, PostgresqlDatabase):
        return
    # The words of 7 letters or more that the owner lacks join their list; the parts of those of
    # 8 letters or more (endings from the third letter on, 4 letters or longer:
    # dms.search.terms's INNER_START, MIN_INNER, MIN_COMPOUND) join the parts unless the word's
    # first is stored.
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_add_inner(owner TEXT, words tsvector) RETURNS VOID
        LANGUAGE plpgsql AS $$
        DECLARE
            known INTEGER;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM unnest(tsvector_to_array(words)) AS w (word)
                           WHERE char_length(w.word) >= 7 AND left(w.word, 1) <> '~') THEN
                RETURN;
            END IF;
            SELECT number INTO known FROM search_owner WHERE owner_id = owner;
            IF known IS NULL THEN
                INSERT INTO search_owner (owner_id) VALUES (owner)
                ON CONFLICT (owner_id) DO NOTHING;
                SELECT number INTO known FROM search_owner WHERE owner_id = owner;
            END IF;
            WITH gained AS (
                INSERT INTO search_owner_word (owner_number, word)
                SELECT known, w.word FROM unnest(tsvector_to_array(words)) AS w (word)
                WHERE char_length(w.word) >= 7 AND left(w.word, 1) <> '~'
                  AND NOT EXISTS (SELECT 1 FROM search_owner_word AS o
                                  WHERE o.owner_number = known AND o.word = w.word)
                RETURNING word)
            INSERT INTO search_part (part, word)
            SELECT substr(new_word, n), new_word
            FROM (SELECT g.word AS new_word FROM gained AS g
                  WHERE char_length(g.word) >= 8
                    AND NOT EXISTS (SELECT 1 FROM search_part AS p
                                    WHERE p.part = substr(g.word, 3) AND p.word = g.word))
                 AS new_words,
                 generate_series(3, char_length(new_word) - 3) AS n;
        END
        $$""")
    db.execute_sql("""
        INSERT INTO search_owner (owner_id)
        SELECT DISTINCT owner_id FROM search_entry ORDER BY owner_id
        ON CONFLICT (owner_id) DO NOTHING""")
    db.execute_sql("""
        INSERT INTO search_owner_word (owner_number, word)
        SELECT DISTINCT o.number, w.word
        FROM search_entry AS s
        JOIN search_owner AS o ON o.owner_id = s.owner_id,
        unnest(tsvector_to_array(s.heading || s.body)) AS w (word)
        WHERE char_length(w.word) = 7 AND left(w.word, 1) <> '~'""")
