"""Numbered schema migrations, applied in order at start-up by playhouse.migrations.Runner.

Each file is frozen once released: it describes the schema as it was then, in plain SQL, and never
imports dms.db.models. A change to the schema is a new file with the next number.
"""
