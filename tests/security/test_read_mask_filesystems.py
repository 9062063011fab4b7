"""A read mask's search is reused only below folders whose file system keeps change times as the kernel does: on a
network file system (an attribute cache) or a FUSE one (sshfs reports the modification time, which a program can
set back) a file made under a reused search could go unseen, so there the search is made at every start."""

import os
import time
from pathlib import Path

import pytest

from kairox.policy import Rule, read_mask
from kairox.sandbox import _filesystems
from kairox.sandbox._filesystems import keep_change_times, mounted_types
from kairox.sandbox._readmask import ReadMask

RACY_SEC = 2.1

TABLE = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 27 0:40 / /home/me/remote rw,nosuid,nodev,relatime shared:1 - fuse.sshfs me@host:/ rw,user_id=0
31 27 0:41 / /mnt/nfs rw,relatime - nfs4 server:/export rw,vers=4.2
32 27 0:42 / /mnt/share rw,relatime - cifs //server/share rw
33 27 0:43 / /mnt/vm rw,relatime - virtiofs host rw
34 27 0:44 / /var/lib/docker/x rw,relatime - overlay overlay rw,lowerdir=/a
35 27 0:45 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw
36 27 0:45 / /srv/again rw - fuse.odd odd rw
garbage line
"""


def test_local_kernel_file_systems_are_trusted_and_network_or_user_space_ones_are_not() -> None:
    types = mounted_types(TABLE)
    assert types[os.makedev(254, 0)] == "ext4" and types[os.makedev(0, 40)] == "fuse.sshfs"
    assert keep_change_times([os.makedev(254, 0), os.makedev(0, 44)], TABLE)  # ext4, overlay
    for device in ((0, 40), (0, 41), (0, 42), (0, 43), (0, 21)):  # sshfs, nfs4, cifs, virtiofs, proc
        assert not keep_change_times([os.makedev(254, 0), os.makedev(*device)], TABLE), device
    assert not keep_change_times([os.makedev(0, 45)], TABLE), "one device mounted as tmpfs and as FUSE"
    assert not keep_change_times([os.makedev(7, 7)], TABLE), "a device the table does not name"
    assert keep_change_times([], TABLE)


def test_this_machines_temp_folder_is_trusted_and_proc_is_not(tmp_path: Path) -> None:
    assert keep_change_times([os.stat(tmp_path).st_dev])
    assert not keep_change_times([os.stat("/proc").st_dev])


def _mask(ws: Path) -> ReadMask:
    mask = read_mask((Rule(action="deny", pattern="fs.read(**/.env)"),), workspace=ws, home=ws.parent, roots=(ws,))
    assert isinstance(mask, ReadMask)
    return mask


@pytest.mark.parametrize("kind", ["ext4", "fuse.sshfs"])
def test_a_search_below_a_folder_on_an_untrusted_file_system_is_made_at_every_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / ".env").write_text("TOKEN=1\n")
    device = os.stat(ws).st_dev
    # the mount table as it would read with the workspace's device mounted as `kind`
    table = tmp_path / "mountinfo"
    table.write_text(f"40 1 {os.major(device)}:{os.minor(device)} / {tmp_path} rw - {kind} src rw\n")
    monkeypatch.setattr(_filesystems, "MOUNTINFO", str(table))
    mask = _mask(ws)
    time.sleep(RACY_SEC)  # older than the racy window: only the file system's type decides
    assert mask().files == (ws / "a" / ".env",)
    assert mask().files == (ws / "a" / ".env",)
    assert mask.searches.runs == (1 if kind == "ext4" else 2)
