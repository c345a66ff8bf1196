"""The archive-limit options (``escalation.cli.commands._archive_limits``) show the library's defaults."""
from escalation.cli.commands._archive_limits import ARCHIVE_DEFAULT, MEMBER_DEFAULT, size
from escalation.estimators.records import ArchiveLimits


def test_the_options_defaults_are_the_archive_limits_defaults():
    assert size(MEMBER_DEFAULT, "--max-member-bytes") == ArchiveLimits().member == 64 << 20
    assert size(ARCHIVE_DEFAULT, "--max-archive-bytes") == ArchiveLimits().archive == 2 << 30


def test_sizes_are_powers_of_1024():
    assert [size(text, "--x") for text in ("1048576", "1K", "1.5M", "2g", "1TiB", " 3 MB ")] == \
        [1 << 20, 1 << 10, 3 << 19, 2 << 30, 1 << 40, 3 << 20]
