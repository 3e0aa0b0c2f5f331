"""Words inside compound words (api.md §22, "Search"): `bescheid` finds `Steuerbescheid`.

PostgreSQL's search rows gain, beside each word's `~` beginnings, the inner parts of its words of 8
letters or more as `^` lexemes: their endings that begin 2 letters or more into them and are 4
letters or longer (`steuerbescheid`: `^euerbescheid` ... `^heid`; dms.search.terms's
MIN_COMPOUND, INNER_START and MIN_INNER, the parts tantivy's `inner` field holds), so that a word
inside another is a `^word:*` prefix in the GIN index
(dms.search.pgquery). dms_search_prefixes gives both, for headings and bodies alike; a long text's
body counts the parts' bytes against its 1,000,000. Every row is then computed again, once, at
the end of this migration's transaction (stale = 3: the deferred refresh of every entry).

SQLite's tantivy index holds the parts in a field of its own: its format changed, it is rebuilt at
start-up (dms.search.index). Nothing to do here for SQLite.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    if not isinstance(db, PostgresqlDatabase):
        return
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_prefixes(words tsvector) RETURNS TEXT[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT coalesce(array_agg(DISTINCT part), '{}') FROM (
                SELECT '~' || left(word, n) AS part
                FROM unnest(tsvector_to_array(words)) AS word,
                     generate_series(3, least(5, char_length(word))) AS n
                UNION ALL
                SELECT '^' || substr(word, n)
                FROM unnest(tsvector_to_array(words)) AS word,
                     generate_series(3, char_length(word) - 3) AS n
                WHERE char_length(word) >= 8
            ) AS parts
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
            -- A word costs its bytes, at most three beginnings no longer than its first 5
            -- letters, and its inner parts: fewer than its letters, none longer than it.
            SELECT coalesce(array_to_tsvector(array_agg(word)), '') INTO words FROM (
                SELECT word, sum(octet_length(word) + 3 * (1 + octet_length(left(word, 5)))
                                 + CASE WHEN char_length(word) >= 8
                                        THEN (char_length(word) - 5) * (octet_length(word) + 4)
                                        ELSE 0 END)
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
    db.execute_sql("UPDATE search_entry SET stale = 3")
