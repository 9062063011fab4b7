"""The deployment files: the Kubernetes manifests parse and hang together, the Containerfile installs what the
tests elsewhere install, and every ``kairox serve`` option they pass exists. (No container engine runs here.)"""

import re
import tomllib
from pathlib import Path

import yaml
from tests.helpers import kairox

from kairox.config import KairoxConfig
from kairox.gateway._users import read_users

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "deploy" / "kubernetes"


def serve_options() -> set[str]:
    done = kairox("serve", "--help")
    assert done.code == 0, done.stderr
    return set(re.findall(r"(--[a-z][a-z-]+)", done.stdout))


def test_the_kubernetes_manifests_run_three_probed_non_root_replicas_the_budget_and_service_select(
    tmp_path: Path,
) -> None:
    docs = {d["kind"]: d for d in yaml.safe_load_all((MANIFESTS / "kairox.yaml").read_text())}
    assert set(docs) == {"Secret", "ConfigMap", "Deployment", "Service", "PodDisruptionBudget"}
    deployment = docs["Deployment"]["spec"]
    labels = deployment["template"]["metadata"]["labels"]
    assert deployment["replicas"] == 3 and deployment["selector"]["matchLabels"] == labels
    assert docs["Service"]["spec"]["selector"] == labels
    assert docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == labels
    assert docs["PodDisruptionBudget"]["spec"]["minAvailable"] < deployment["replicas"]
    pod = deployment["template"]["spec"]
    [container] = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] != 0
    probes = {k: container[k]["httpGet"]["path"] for k in ("readinessProbe", "livenessProbe", "startupProbe")}
    assert probes == {"readinessProbe": "/readyz", "livenessProbe": "/healthz", "startupProbe": "/healthz"}
    args = container["args"]
    assert args[0] == "serve" and {a for a in args if a.startswith("--")} <= serve_options()
    env = {e["name"] for e in container["env"]}
    assert {v for a in args for v in re.findall(r"\$\((\w+)\)", a)} <= env
    # the user layer and the users file the replicas read are valid as they stand
    KairoxConfig.model_validate(tomllib.loads(docs["ConfigMap"]["data"]["kairox.toml"]))
    users = tmp_path / "users.toml"
    users.write_text(docs["Secret"]["stringData"]["users.toml"])
    assert sorted(read_users(users).values()) == ["alice", "bob"]
    trial = [d["kind"] for d in yaml.safe_load_all((MANIFESTS / "postgres-dev.yaml").read_text())]
    assert trial == ["StatefulSet", "Service"]


def test_the_containerfile_installs_what_kairox_needs_and_runs_serve_as_a_user() -> None:
    text = (ROOT / "Containerfile").read_text()
    packages = set(re.search(r"--no-install-recommends ([a-z0-9 -]+?) \\", text)[1].split())  # type: ignore[index]
    needed = re.search(r'NEEDED="([^"]+)"', (ROOT / "scripts" / "system-packages.sh").read_text())[1]  # type: ignore[index]
    assert {pair.split(":")[1] for pair in needed.split()} <= packages  # the packages `make demo` installs
    extras = re.search(r"\[([a-z,]+)\]'", text)[1].split(",")  # type: ignore[index]
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras == ["postgres", "otel"] and all(e in optional for e in extras)
    assert re.search(r"^USER 10001$", text, re.M)
    cmd = yaml.safe_load(re.search(r"^CMD (.+)$", text, re.M)[1])  # type: ignore[index]
    assert cmd[0] == "serve" and {a for a in cmd if a.startswith("--")} <= serve_options()
