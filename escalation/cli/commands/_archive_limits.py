"""``--max-member-bytes``, ``--max-archive-bytes`` and ``--max-document-bytes``: the size limits of inspect
``.eval`` archives and of JSON documents, for every command that reads logs (score, leaderboard, policy init and
check)."""
from __future__ import annotations

import re
from typing import Annotated

import typer

#: The defaults, as the options show them: those of :class:`escalation.estimators.records.ArchiveLimits`
#: (a test checks that they agree; written out here so that ``--help`` imports no numerical library).
MEMBER_DEFAULT, ARCHIVE_DEFAULT, DOCUMENT_DEFAULT = "64M", "2G", "512M"

_HELP = ("inspect .eval logs: the most {what} may decompress to (K, M, G, T: powers of 1024). The bytes are "
         "counted as they are decompressed, and a log that passes the limit is refused (a zip bomb).")

MaxMemberBytes = Annotated[str, typer.Option("--max-member-bytes", metavar="SIZE",
                                             help=_HELP.format(what="one member (a sample)"))]
MaxArchiveBytes = Annotated[str, typer.Option("--max-archive-bytes", metavar="SIZE",
                                              help=_HELP.format(what="the samples of one archive"))]
MaxDocumentBytes = Annotated[str, typer.Option("--max-document-bytes", metavar="SIZE", help=(
    "The largest JSON document read (an inspect_ai .json log, a tau-bench list; K, M, G, T: powers of 1024). It "
    "is parsed whole and may take up to 24 times its size in memory; JSON Lines files and .eval archives are read "
    "a piece at a time and have no such limit."))]


def size(text: str, flag: str) -> int:
    """A number of bytes as a size option takes it: ``1048576``, or with K, M, G or T (powers of 1024): ``512M``."""
    from escalation.estimators.records import InputError

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.ASCII | re.IGNORECASE)
    found = int(float(match[1]) * 1024 ** ("KMGT".find(match[2].upper()) + 1 if match[2] else 0)) if match else 0
    if found < 1:
        raise InputError(f"must be a size such as 512M or 4G (K, M, G, T: powers of 1024), got {text!r}", field=flag)
    return found


def archive_limits(max_member_bytes: str, max_archive_bytes: str, max_document_bytes: str = DOCUMENT_DEFAULT):
    """The :class:`~escalation.estimators.records.ArchiveLimits` of the three options."""
    from escalation.estimators.records import ArchiveLimits

    return ArchiveLimits(member=size(max_member_bytes, "--max-member-bytes"),
                         archive=size(max_archive_bytes, "--max-archive-bytes"),
                         document=size(max_document_bytes, "--max-document-bytes"))
