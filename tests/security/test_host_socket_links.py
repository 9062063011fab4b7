"""A host socket bound through a symlink in a hidden socket folder (attack corpus): the kernel lists the path the
server gave to ``bind`` (``$SSH_AUTH_SOCK``'s folder ``/link/svc.sock``), while the socket lies where the link
leads, outside every hidden folder. Hiding the folder hides the link, not the socket: it must be covered where
it really is. Real bwrap, a real server (``tests/servers/unix_marker.py``) that writes a marker per connection."""

import os
import shutil
from pathlib import Path

import pytest
from tests.security.test_host_sockets import outside_temp, probe, registry_settings, serve, stop, unreached

from kairox.policy import NonInteractiveApprover
from kairox.registry import build_registry
from kairox.sandbox._bwrap import bound_sockets, socket_folders
from kairox.tools import ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_a_socket_bound_through_a_link_in_a_hidden_folder_is_covered_where_it_lies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: bool
) -> None:
    outside = outside_temp()
    agent, real = outside / "agent", outside / "real"
    agent.mkdir()
    real.mkdir()
    (agent / "link").symlink_to("../real")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent / "agent.sock"))  # the agent's folder is hidden whole
    (tmp_path / "ws").mkdir()
    (tmp_path / "markers").mkdir()
    server = serve(agent / "link" / "svc.sock", tmp_path / "markers")
    try:
        assert Path(os.path.realpath(agent)) in socket_folders()
        assert (real / "svc.sock").is_socket()
        assert real / "svc.sock" in bound_sockets()  # the kernel's list, read as it is, leads there
        registry = await build_registry(registry_settings(tmp_path / "ws", network), approver=NonInteractiveApprover())

        at_its_place = [type(server)(real / "svc.sock", server.marker, server.process)]
        result = await registry.call(ToolCall(name="shell.exec", arguments={"command": probe(at_its_place)}))

        unreached(at_its_place, result.text_content())
    finally:
        stop([server])
        shutil.rmtree(outside, ignore_errors=True)
