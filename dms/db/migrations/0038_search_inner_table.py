"""PostgreSQL's inner parts of long words in a table of their own (issue 47).

Migration 0035 stored, beside each word's `~` beginnings, the inner parts of its words of 8
letters or more as `^` lexemes in every search row that holds the word: a word of n letters
added n − 5 lexemes to every document it occurs in, and a million documents' database grew from
9.97 to 27.86 GiB (6.0× SQLite's, bench/RESULTS.md), its rows' bodies ~14 KB each, which a
search for a common word reads from TOAST row after row.

Now each distinct part is stored once per owner, with the word it is a part of: `search_inner`
has one row per (owner, part, word) of the words of the owner's search rows, so it grows with each
owner's vocabulary, not with each document. A query word looked for inside others
(dms.search.pgquery) is first turned into the words of the owner's that hold it (the parts that
begin with it, by the index, a bounded number) and those whole words are then matched as any word
is. Per owner, not shared: what one owner's search expands to must not depend on the words of
others (a bounded expansion would be crowded out by them), and an owner's words go with them.

The refresh trigger, and the insert of a node with its title, add the parts of the words a row
gains that the table lacks. Two transactions adding the same word at once may both add it (no
unique index, so that neither waits for the other and no deadlock can arise between writers): a
duplicate only repeats a word in a lookup, which takes distinct words. Parts of words no
document holds any longer stay (a word matched by no row finds nothing); `dms reindex` does not
shrink the table.

The rows' beginnings stay (`~`, a short prefix is one GIN key). Every row is computed again, once,
at the end of this migration's transaction (stale = 3), which also fills the table. SQLite's
tantivy index keeps its `inner` field: nothing to do there.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    if not isinstance(db, PostgresqlDatabase):
        return
    db.execute_sql("""
        CREATE TABLE search_inner (
            owner_id TEXT COLLATE "C" NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            part     TEXT COLLATE "C" NOT NULL,
            word     TEXT COLLATE "C" NOT NULL
        )""")
    db.execute_sql("CREATE INDEX search_inner_part ON search_inner (owner_id, part, word)")
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_prefixes(words tsvector) RETURNS TEXT[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT coalesce(array_agg(DISTINCT '~' || left(word, n)), '{}')
            FROM unnest(tsvector_to_array(words)) AS word,
                 generate_series(3, least(5, char_length(word))) AS n
        $$""")
    # The inner parts of a tsvector's words that the table lacks: endings from the third letter
    # on, 4 letters or longer, of words of 8 letters or more (dms.search.terms's INNER_START,
    # MIN_INNER, MIN_COMPOUND). A word is known when its first part is stored with it.
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_add_inner(owner TEXT, words tsvector) RETURNS VOID
        LANGUAGE sql AS $$
            INSERT INTO search_inner (owner_id, part, word)
            SELECT owner, substr(long_word, n), long_word
            FROM (SELECT w.word AS long_word FROM unnest(tsvector_to_array(words)) AS w (word)
                  WHERE char_length(w.word) >= 8 AND left(w.word, 1) <> '~'
                    AND NOT EXISTS (SELECT 1 FROM search_inner AS known
                                    WHERE known.owner_id = owner
                                      AND known.part = substr(w.word, 3)
                                      AND known.word = w.word)) AS new_words,
                 generate_series(3, char_length(long_word) - 3) AS n
        $$""")
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_body(target TEXT) RETURNS tsvector
        LANGUAGE plpgsql STABLE AS $$
        DECLARE
            whole TEXT;
            words tsvector;
        BEGIN
            SELECT string_agg(p.text, ' ' ORDER BY p.number) INTO whole FROM page AS p
            WHERE p.version_id = (SELECT v.id FROM document_version AS v
                                  WHERE v.document_id = target ORDER BY v.number DESC LIMIT 1);
            IF whole IS NULL THEN
                RETURN '';
            END IF;
            IF octet_length(whole) <= 65536 THEN  -- most documents: one tsvector, below 1 MiB
                words := strip(to_tsvector('dms_fold', dms_search_words(whole)));
                RETURN words || array_to_tsvector(dms_search_prefixes(words));
            END IF;
            -- A word costs its bytes, and at most three beginnings no longer than its first 5
            -- letters.
            SELECT coalesce(array_to_tsvector(array_agg(word)), '') INTO words FROM (
                SELECT word, sum(octet_length(word) + 3 * (1 + octet_length(left(word, 5))))
                             OVER (ORDER BY first_seen, word) AS used
                FROM (
                    SELECT word, min(seq) AS first_seen FROM (
                        SELECT pieces.seq,
                               unnest(tsvector_to_array(to_tsvector('dms_fold', pieces.piece)))
                                   AS word
                        FROM dms_search_pieces(target) AS pieces
                    ) AS occurrences GROUP BY word
                ) AS words
            ) AS counted WHERE used <= 1000000;
            RETURN words || array_to_tsvector(dms_search_prefixes(words));
        END
        $$""")
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_refresh() RETURNS trigger
        LANGUAGE plpgsql AS $$
        DECLARE
            flags INTEGER;
            gained tsvector;
        BEGIN
            SELECT stale INTO flags FROM search_entry WHERE node_id = NEW.node_id;
            IF flags IS NULL OR flags = 0 THEN
                RETURN NULL;
            END IF;
            UPDATE search_entry SET
                heading = CASE WHEN flags & 1 = 1
                               THEN coalesce(dms_search_heading(node_id), heading)
                               ELSE heading END,
                body = CASE WHEN flags & 2 = 2 THEN dms_search_body(node_id) ELSE body END,
                stale = 0
            WHERE node_id = NEW.node_id
            RETURNING CASE WHEN flags & 1 = 1 THEN heading ELSE '' END
                   || CASE WHEN flags & 2 = 2 THEN body ELSE '' END INTO gained;
            PERFORM dms_search_add_inner(NEW.owner_id, gained);
            RETURN NULL;
        END
        $$""")
    # A new node's heading is computed on insert, not at commit (dms_search_node_inserted,
    # migration 0013): its words join the table there.
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_node_inserted() RETURNS trigger
        LANGUAGE plpgsql AS $$
        DECLARE
            heading tsvector;
        BEGIN
            IF NEW.trash_id IS NULL THEN
                heading := dms_search_weighted(NEW.title, 'A');
                INSERT INTO search_entry (node_id, owner_id, heading, stale)
                VALUES (NEW.id, NEW.owner_id, heading,
                        CASE WHEN NEW.ocr_status IN ('succeeded', 'failed') THEN 2 ELSE 0 END);
                PERFORM dms_search_add_inner(NEW.owner_id, heading);
            END IF;
            RETURN NULL;
        END
        $$""")
    db.execute_sql("UPDATE search_entry SET stale = 3")
