"""Rules: documents that file themselves (docs/api.md, "Rules"). A user's rules look at each
new document once its text is known and tag it, move it or retitle it. What a rule's `match`
finds is dms.domain.matching's (the five algorithms; correspondents and document types match with
them too).

- `checks`: a rule's attributes checked (limits, pointers into the body);
- `store`: a user's rules kept (create, change, delete; disabled when their folder goes);
- `templates`: the title templates of `set_title`, without str.format;
- `facts`: what rules look at in a document, read bounded;
- `filing`: rules at work on new documents, in the job that read them, and applying changes;
- `matcher`: one rule over many documents (a dry run's more than a few, and each slice of a run,
  in a child process, the hidden `dms _rules-match`); `preview`: the dry run; `runs`: runs over
  existing documents in the background.

Dependencies go down this list's reverse: nothing here imports dms.domain.trash (which imports
`store` to disable the rules of a deleted folder) or dms.domain.uploads (which marks new
documents through `filing.mark_new`)."""
