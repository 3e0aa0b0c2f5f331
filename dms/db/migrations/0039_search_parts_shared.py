"""PostgreSQL's inner parts of words stored once for all owners, each owner's words as a list
(issue 47).

Migration 0038 stored each owner's words' inner parts per owner: `search_inner (owner_id, part,
word)`. With 1,000 owners of similar papers it held every part a thousand times, with a
36-character owner id in every row: 7.83 GiB of a 19.06 GiB database (bench/RESULTS.md).

Now the parts are stored once, whoever's words they are (`search_part (part, word)`), and each
owner's words that have parts once each (`search_owner_word (owner_number, word)`, the owner by
a small number from `search_owner`). A lookup (dms.search.postgres) takes the parts that begin
with a piece, in order, and keeps the words the owner has: what it expands to still depends on
the owner's words alone, up to a bound of the parts read (INNER_SCAN), which only a piece inside
that many words of the whole vocabulary reaches.

As in 0038, no unique index on the words or the parts: two writers adding the same new word at
once may both add it, and neither waits for the other (a lookup takes distinct words). The
owner's number is unique: two writers giving a new owner their number at once, the second
waits for the first's commit, once per owner. A deleted user's number and words go with them;
parts of words nobody holds any longer stay, as before.

The rows of search_inner are carried over, then the table is dropped; the search rows are not
computed again.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    if not isinstance(db, PostgresqlDatabase):
        return
    db.execute_sql("""
        CREATE TABLE search_owner (
            number   INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            owner_id TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES "user" (id) ON DELETE CASCADE
        )""")
    db.execute_sql("""
        CREATE TABLE search_owner_word (
            owner_number INTEGER NOT NULL REFERENCES search_owner (number) ON DELETE CASCADE,
            word         TEXT COLLATE "C" NOT NULL
        )""")
    db.execute_sql("""
        CREATE TABLE search_part (
            part TEXT COLLATE "C" NOT NULL,
            word TEXT COLLATE "C" NOT NULL
        )""")
    db.execute_sql("INSERT INTO search_owner (owner_id) "
                   "SELECT DISTINCT owner_id FROM search_inner ORDER BY owner_id")
    # A word's first part begins at its third letter: one row per owner and word.
    db.execute_sql("""
        INSERT INTO search_owner_word (owner_number, word)
        SELECT DISTINCT o.number, i.word FROM search_inner AS i
        JOIN search_owner AS o ON o.owner_id = i.owner_id
        WHERE i.part = substr(i.word, 3)""")
    db.execute_sql("INSERT INTO search_part (part, word) "
                   "SELECT DISTINCT part, word FROM search_inner")
    db.execute_sql("DROP TABLE search_inner")
    db.execute_sql("CREATE INDEX search_owner_word_word ON search_owner_word (owner_number, word)")
    db.execute_sql("CREATE INDEX search_part_part ON search_part (part, word)")
    # The long words (8 letters or more) of a tsvector that the owner lacks join their words, and
    # their inner parts (endings from the third letter on, 4 letters or longer: dms.search.terms's
    # INNER_START, MIN_INNER, MIN_COMPOUND) join the parts unless the word's first is stored.
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_add_inner(owner TEXT, words tsvector) RETURNS VOID
        LANGUAGE plpgsql AS $$
        DECLARE
            known INTEGER;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM unnest(tsvector_to_array(words)) AS w (word)
                           WHERE char_length(w.word) >= 8 AND left(w.word, 1) <> '~') THEN
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
                WHERE char_length(w.word) >= 8 AND left(w.word, 1) <> '~'
                  AND NOT EXISTS (SELECT 1 FROM search_owner_word AS o
                                  WHERE o.owner_number = known AND o.word = w.word)
                RETURNING word)
            INSERT INTO search_part (part, word)
            SELECT substr(new_word, n), new_word
            FROM (SELECT g.word AS new_word FROM gained AS g
                  WHERE NOT EXISTS (SELECT 1 FROM search_part AS p
                                    WHERE p.part = substr(g.word, 3) AND p.word = g.word))
                 AS new_words,
                 generate_series(3, char_length(new_word) - 3) AS n;
        END
        $$""")
