"""Mail accounts (api.md, "Mail accounts"): the caller's own IMAP accounts; the password is
write-only."""

from __future__ import annotations

from dms.db.models import MailAccount
from dms.domain import mailaccounts
from dms.web.endpoints import Context
from dms.web.jsonapi import Reply, RouteTable, created, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def account_resource(ctx: Context, account: MailAccount) -> dict:
    return {"type": "mail-accounts", "id": account.id, "attributes": {
        "host": account.host, "port": account.port, "security": account.security,
        "username": account.username, "mailbox": account.mailbox,
        "after_import": account.after_import, "move_to": account.move_to,
        "folder_per_sender": bool(account.folder_per_sender), "enabled": bool(account.enabled),
        "last_checked_at": format_datetime(account.last_checked_at),
        "last_error": account.last_error, "imported_count": account.imported_count,
        "checking": ctx.runtime.mail.is_busy(account)}}


@routes.get("/mail-accounts/", Operation(
    "The caller's mail accounts", list_of(ref("MailAccount")), query=PAGE_QUERY))
def list_mail_accounts(ctx: Context):
    return ctx.paginate(mailaccounts.accounts_of(ctx.user),
                        lambda rows: [account_resource(ctx, a) for a in rows])


@routes.post("/mail-accounts/", Operation(
    "Add a mail account whose attachments become documents", data_of(ref("MailAccount")), 201,
    request=ref("MailAccountInput")))
def create_mail_account(ctx: Context):
    _, attributes = ctx.resource("mail-accounts")
    account = mailaccounts.create_account(ctx.user, attributes, ctx.config)
    return created({"data": account_resource(ctx, account)})


@routes.get("/mail-accounts/{account_id}/", Operation(
    "One mail account (never its password)", data_of(ref("MailAccount"))))
def get_mail_account(ctx: Context, account_id: str):
    return {"data": account_resource(ctx, mailaccounts.owned_account(ctx.user, account_id))}


@routes.patch("/mail-accounts/{account_id}/", Operation(
    "Change a mail account", data_of(ref("MailAccount")), request=ref("MailAccountInput")))
def update_mail_account(ctx: Context, account_id: str):
    _, attributes = ctx.resource("mail-accounts")
    account = mailaccounts.update_account(ctx.user, account_id, attributes, ctx.config)
    return {"data": account_resource(ctx, account)}


@routes.delete("/mail-accounts/{account_id}/", Operation(
    "Delete a mail account (its documents stay)", status=204))
def delete_mail_account(ctx: Context, account_id: str):
    mailaccounts.delete_account(ctx.user, account_id)
    return no_content()


@routes.post("/mail-accounts/{account_id}/check/", Operation(
    "Queue a check of a mail account; the account as it is now (its result shows once `checking` "
    "is false)", data_of(ref("MailAccount")), 202, errors=(429, 503)))
def check_mail_account(ctx: Context, account_id: str):
    """202 at once: the check runs in the background (dms.intake.mail.checker); its result shows in
    `last_checked_at` and `last_error` once `checking` is false."""
    account = ctx.runtime.mail.request(ctx.user, account_id)
    return Reply({"data": account_resource(ctx, account)}, status=202)
