"""Every rule and state change of dms: accounts, credentials, the folder tree, documents and
their versions, tags, preferences, previews, archives, mail accounts. Handlers (dms.web) parse,
call one function here and serialise; the functions raise dms.errors. What the domain needs from
the machinery (the job queue, the search index) it declares as interfaces in
dms.domain.services; the composition root (dms.runtime) supplies them."""
