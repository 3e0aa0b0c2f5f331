"""Paper coming in without a click: `dms import` of files and directory trees, the consume
folder for scanners, attachments from mail accounts over IMAP. Every source goes through the
domain's one import function (dms.domain.uploads.import_into_folder)."""
