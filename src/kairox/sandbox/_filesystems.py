"""Which file systems keep a folder's status change time (``st_ctime``) the way a reused search relies on: set by
the kernel at every change, never set back by a program, never served from a stale cache. A network file system
may answer ``stat`` from its attribute cache, and a user-space one (FUSE: sshfs reports the modification time,
which ``touch`` sets back) may report whatever its daemon likes: a search below such a folder is made every time."""

import os
from collections.abc import Iterable

KEEPS_CTIME = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "zfs", "f2fs", "bcachefs", "jfs", "nilfs2"}
)
"""Local file systems whose change times the kernel keeps; any other type (``nfs``, ``cifs``, ``9p``, ``fuse.*``,
``virtiofs``, a type not known here) is not trusted to show every change."""

MOUNTINFO = "/proc/self/mountinfo"


def mounted_types(mountinfo: str) -> dict[int, str]:
    """Each mounted device (``st_dev``) and its file system type, from the text of ``/proc/self/mountinfo``. A
    device mounted more than once with different types (never seen in practice) keeps the least trusted."""
    types: dict[int, str] = {}
    for line in mountinfo.splitlines():
        fields = line.split()
        try:
            major, minor = (int(part) for part in fields[2].split(":"))
            kind = fields[fields.index("-", 6) + 1]
        except (IndexError, ValueError):
            continue
        device = os.makedev(major, minor)
        if types.get(device, "") not in KEEPS_CTIME and device in types:
            continue  # already known as not keeping change times: a second mount of it does not change that
        types[device] = kind
    return types


def keep_change_times(devices: Iterable[int], mountinfo: str | None = None) -> bool:
    """Whether every device of ``devices`` is a file system that keeps change times (``KEEPS_CTIME``); False for a
    device the mount table does not name (a btrfs subvolume's own device, say) and when it cannot be read."""
    wanted = set(devices)
    if not wanted:
        return True
    if mountinfo is None:
        try:
            with open(MOUNTINFO, encoding="utf-8", errors="replace") as table:
                mountinfo = table.read()
        except OSError:
            return False
    types = mounted_types(mountinfo)
    return all(types.get(device) in KEEPS_CTIME for device in wanted)
