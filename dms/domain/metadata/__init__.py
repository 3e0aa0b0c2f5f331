"""What a document is about (api.md §16): correspondents and document types (`labels`), custom
fields and their values (`fields`), a document's metadata changed (`document`), notes, the date
read from a document's text (`dates`) and custom field queries (`fieldquery`)."""
