"""A user's own rows by id (dms.domain.ownership.owned, behind every `/rules/{id}/`,
`/tags/{id}/`, `/webhooks/{id}/`, ... of the API): the caller's row, whole, as peewee reads it;
another user's row, an unknown id, and an id that is not text at all (a number, an object a
client sent) are all NotFound — never a server error.

On the fast tier (the domain's functions on a migrated database, no server)."""

from __future__ import annotations

import pytest

from dms.db.models import MailAccount, Rule, RuleRun, SavedSearch, Tag, Webhook
from dms.domain.ownership import owned
from dms.domain.rules import runs
from dms.errors import NotFound
from tests.harness.domaintier import new_user
from tests.harness.rules import make_rule


def test_the_callers_row_whole_and_no_one_elses(services):
    alice, bob = new_user("alice"), new_user("bob")
    rule = make_rule(alice, "Bills", "bill", actions={"add_tags": ["bill"]})
    run = runs.start_run(alice, rule.id)
    for model, row_id in ((Rule, rule.id), (RuleRun, run.id)):
        mine = owned(model, alice, row_id)
        assert (type(mine), mine.__data__) == (model, model.get_by_id(row_id).__data__)
        with pytest.raises(NotFound):
            owned(model, bob, row_id)
    for model in (Rule, Tag, Webhook, MailAccount, SavedSearch):
        for unknown in ("no-such-id", 42, {"id": rule.id}, [rule.id], None):
            with pytest.raises(NotFound):
                owned(model, alice, unknown)
