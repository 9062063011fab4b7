// The JSON API of `kairox.web` (docs/web-api.md). The page is opened at `/?token=T`; the server answers with
// an HttpOnly cookie, so every request here carries the token without this code ever seeing it.

export type ServerKind = "mcp" | "lsp" | "dap";
// The runtime's server view (kairox.runtime.ServerViewStatus): "idle" is a language server or debug adapter that
// starts on first use; "held_back" a server of an untrusted project; "pending_retrust" one changed since trusting.
export type ServerStatus =
  | "starting"
  | "ready"
  | "failed"
  | "stopped"
  | "idle"
  | "disabled"
  | "held_back"
  | "pending_retrust";
export type ConfigLayer = "user" | "project" | "local";

export interface Provenance {
  layer: string;
  file: string | null;
  line: number | null;
}

export interface ServerTool {
  name: string;
  description: string;
  enabled: boolean;
}

export interface Server {
  kind: ServerKind;
  name: string;
  status: ServerStatus;
  /** The status in the runtime's words, the TUI's and the command line's (`idle`, `held back by trust` ...). */
  label?: string;
  reason: string | null;
  enabled: boolean;
  transport: string | null;
  provenance: Provenance | null;
  tools: ServerTool[];
  stderr_tail: string;
  /** The command line or URL, secrets redacted. */
  target?: string;
  required?: boolean;
  /** How the server's process is confined (sandbox profile, network, writable roots), when known. */
  confinement?: Record<string, unknown> | null;
  /** The same in words: `confined: workspace_write, network on, writes ...`. */
  confinement_text?: string | null;
}

export interface HeldBack {
  what: string;
  file: string | null;
  line: number | null;
}

export interface State {
  workspace: string;
  trusted: boolean;
  held_back: HeldBack[];
  model: {
    configured: boolean;
    name: string | null;
    provider: string | null;
    /** Why there is no model session, and what to set. */
    problem?: string | null;
    session?: boolean;
  };
  version: string;
  /** Why the session could not start. */
  problem?: string | null;
  /** How full the model's context window is (the agent's measure; `text` is the TUI's meter). */
  context?: ContextMeter | null;
  /** Set when the tool definitions alone pass `agent.tools_warning_share` of the window. */
  context_warning?: ContextWarning | null;
  compacting?: boolean;
  /** The model's plan (`todo.write`) as it stands. */
  plan?: PlanEntry[];
}

export interface PlanEntry {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

/** `GET /api/session/rewind`: what rewinding to before a turn would put back, and what it cannot. */
export interface RewindPreview {
  turn: number;
  prompt: string;
  restore: string[];
  remove: string[];
  irreversible: string[];
  text: string;
}

export interface ContextMeter {
  used_tokens: number;
  window_tokens: number;
  share: number;
  tools_tokens: number;
  tools: number;
  source: "usage" | "estimate";
  text: string;
}

export interface ContextWarning {
  tools_tokens: number;
  window_tokens: number;
  tools: number;
  threshold: number;
  message: string;
}

export interface Requirement {
  name: string;
  present: boolean;
  detail: string;
}

export interface Variable {
  name: string;
  description: string;
  required: boolean;
  secret: boolean;
}

export interface CatalogEntry {
  name: string;
  title: string;
  description: string;
  tags: string[];
  source: string;
  version: string | null;
  installed: boolean;
  requirements: Requirement[];
  variables: Variable[];
  /** The `[mcp_servers.NAME]` it installs as. */
  server?: string;
  installable?: boolean;
  problem?: string | null;
}

export interface CatalogEntryDetail extends CatalogEntry {
  command: string[];
  config: string;
  target_file: string;
  /** The file each layer would write; the page shows the one of the chosen layer. */
  target_files?: Record<string, string>;
}

export interface CatalogSource {
  name: string;
  age_seconds: number | null;
  error: string | null;
}

export type SkillScope = "user" | "workspace" | "session" | "plugin";

export interface Skill {
  name: string;
  description: string;
  scope: SkillScope;
  path: string;
  enabled: boolean;
  offered?: boolean;
  hidden_reason?: string | null;
  /** The path of the skill of the same name that wins. */
  shadowed_by: string | null;
}

/** An agent the session's `task` tool can start (a subagent). */
export interface Agent {
  name: string;
  description: string;
  source: string;
  path: string;
  enabled: boolean;
  tools: string[] | null;
  disallowed: string[];
  model: string | null;
  mcp_servers: string[];
  held: string | null;
  color: string | null;
}

export interface Contribution {
  kind: string;
  name: string;
  enabled: boolean;
}

export interface Plugin {
  key: string;
  name: string;
  version: string | null;
  enabled: boolean;
  trusted: boolean;
  path: string;
  permissions: string[];
  compatibility: string[];
  contributions: Contribution[];
  description?: string | null;
  active?: boolean;
  disabled_reason?: string | null;
  compatible?: boolean;
  trust?: string;
  origin?: string;
  /** The folder the plugin loads from instead of where it was found (`[plugins.entries.NAME] path`). */
  path_override?: string | null;
}

export interface Marketplace {
  name: string;
  source: string;
  plugins: number;
}

/** A plugin a registered marketplace offers (`GET /api/plugins/marketplace`). */
export interface MarketPlugin {
  key: string;
  name: string;
  marketplace: string;
  version: string | null;
  description: string | null;
  category: string | null;
  tags: string[];
  source: string;
  /** Its files are read where they are: the detail knows what it contributes before it is installed. */
  local: boolean;
  installed: boolean;
  installed_version: string | null;
}

export interface MarketPluginDetail extends MarketPlugin {
  /** null: not known before its files are fetched (a git source). */
  compatible: boolean | null;
  compatibility: string[];
  permissions: string[];
  contributions: { kind: string; name: string }[];
  trust: string;
  problems: string[];
  target_file: string;
  install_folder: string;
  homepage: string | null;
  author: string | null;
}

export interface PluginMarketplace {
  name: string;
  source: string;
  plugins: number;
  error: string | null;
}

/** One check of the environment (`kairox doctor`): a program or the sandbox, whether it works, and the fix. */
export interface DoctorCheck {
  check: string;
  ok: boolean;
  required: boolean;
  why: string;
  version?: string | null;
  detail?: string | null;
  fix?: string | null;
}

/** A failure or warning of the report: a diagnostic with what to do about it. */
export interface DoctorItem {
  kind: string;
  name: string;
  reason: string;
  severity: string;
  path: string | null;
  line: number | null;
  hint?: string | null;
  fix?: string | null;
  required?: boolean;
}

/** `GET /api/doctor`: the one doctor report the CLI (`kairox doctor --json`) and the TUI show too. */
export interface DoctorReport {
  ok: boolean;
  workspace: string;
  trusted: boolean;
  environment: DoctorCheck[];
  failures: DoctorItem[];
  warnings: DoctorItem[];
  /** `allowed_domains` and `egress_refused` (this session's refusals) only under `sandbox.network = "allowlist"`. */
  sandbox: { allow_unix_sockets: { path: string; socket: boolean }[]; allowed_domains?: string[]; egress_refused?: number };
  mcp_servers: Record<string, { status: string; error?: string | null; required?: boolean; tools?: number; confinement?: Record<string, unknown> | null }>;
  lsp_servers: Record<string, Record<string, unknown> | null>;
  dap_servers: Record<string, Record<string, unknown> | null>;
  tools: number;
}

export interface TraceEvent {
  seq: number;
  time: number;
  type: string;
  summary: string;
  data: unknown;
}

export interface Grant {
  rule: string;
  covers: string;
  exact: boolean;
  persistable: boolean;
}

/** One answer the runtime offers for a request (kairox.runtime.approval_choices), in the order to show. */
export interface ApprovalChoice {
  scope: "once" | "session" | "always" | "deny";
  label: string;
  grant: string | null;
  layers: string[];
  with_message: boolean;
  /** A subagent's ask: the session answer holds for every agent of the session, not only the one that asked. */
  whole_session?: boolean;
}

export interface ApprovalRequest {
  id: string;
  choices: ApprovalChoice[];
  tool: string;
  arguments: unknown;
  command: string | null;
  reason: string;
  asked_by: string | null;
  /** paths the call names that lead elsewhere through a link, each with what it reaches */
  links: string[];
  grants: Grant[];
  layers: string[];
}

export type ApprovalAnswerKind = "once" | "session" | "always" | "deny";

export interface ApprovalAnswer {
  answer: ApprovalAnswerKind;
  grant: string | null;
  layer: string | null;
  message: string | null;
  whole_session?: boolean;
}

/** `GET /api/session/history`: the conversation as the page shows it, and the last event it covers. */
export interface History {
  session_id: string | null;
  items: unknown[];
  turn: string | null;
  seq: number;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly denied: boolean,
  ) {
    super(message);
  }
}

async function request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers = { Accept: "application/json", "Content-Type": "application/json" };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const object = (parsed ?? {}) as { error?: string; denied?: boolean };
    let message = object.error ?? `${method} ${path} answered ${response.status} ${response.statusText}`;
    if (response.status === 401) {
      // the token travels in the link `kairox gui` printed; a bookmark or another browser has no cookie for it
      message = "This page needs the link `kairox gui` printed (it carries the run's token): open that link again.";
    }
    throw new ApiError(message, response.status, object.denied === true);
  }
  return parsed as T;
}

const get = <T>(path: string) => request<T>("GET", path);
const post = <T>(path: string, body: unknown = {}) => request<T>("POST", path, body);
const seg = encodeURIComponent;

export interface WriteResult {
  ok: boolean;
  file: string | null;
  /** Set when the change applies later, e.g. "from the next session". */
  applies?: string;
}

export const api = {
  state: () => get<State>("/api/state"),
  trust: () => post<State>("/api/trust"),

  servers: () => get<{ servers: Server[] }>("/api/servers"),
  server: (kind: ServerKind, name: string) => get<Server>(`/api/servers/${kind}/${seg(name)}`),
  serverAction: (kind: ServerKind, name: string, action: "restart" | "enable" | "disable", layer?: ConfigLayer) =>
    post<WriteResult>(`/api/servers/${kind}/${seg(name)}/${action}`, layer ? { layer } : {}),
  toolToggle: (server: string, tool: string, enable: boolean) =>
    post<WriteResult>(`/api/servers/mcp/${seg(server)}/tools/${seg(tool)}/${enable ? "enable" : "disable"}`),

  catalog: (q: string, tag: string) =>
    get<{ entries: CatalogEntry[]; sources: CatalogSource[] }>(
      `/api/catalog?q=${seg(q)}&tag=${seg(tag)}`,
    ),
  catalogEntry: (name: string) => get<CatalogEntryDetail>(`/api/catalog/${seg(name)}`),
  install: (name: string, variables: Record<string, string>, layer: "project" | "user") =>
    post<{ job: string }>(`/api/catalog/${seg(name)}/install`, { variables, layer }),

  skills: () => get<{ skills: Skill[] }>("/api/skills"),
  skillToggle: (name: string, enable: boolean) =>
    post<WriteResult>(`/api/skills/${seg(name)}/${enable ? "enable" : "disable"}`),

  agents: () => get<{ agents: Agent[] }>("/api/agents"),
  agentToggle: (name: string, enable: boolean) =>
    post<WriteResult>(`/api/agents/${seg(name)}/${enable ? "enable" : "disable"}`),

  plugins: () => get<{ plugins: Plugin[]; marketplaces: Marketplace[] }>("/api/plugins"),
  pluginToggle: (key: string, enable: boolean) =>
    post<WriteResult>(`/api/plugins/${seg(key)}/${enable ? "enable" : "disable"}`),
  pluginPath: (key: string, path: string | null) => post<WriteResult>(`/api/plugins/${seg(key)}/path`, { path }),
  contributionToggle: (key: string, kind: string, name: string, enable: boolean) =>
    post<WriteResult>(
      `/api/plugins/${seg(key)}/contributions/${seg(kind)}/${seg(name)}/${enable ? "enable" : "disable"}`,
    ),

  pluginMarket: (q: string) =>
    get<{ plugins: MarketPlugin[]; marketplaces: PluginMarketplace[] }>(`/api/plugins/marketplace?q=${seg(q)}`),
  marketPlugin: (market: string, name: string) => get<MarketPluginDetail>(`/api/plugins/marketplace/${seg(market)}/${seg(name)}`),
  installPlugin: (market: string, name: string) =>
    post<{ job: string }>(`/api/plugins/marketplace/${seg(market)}/${seg(name)}/install`),

  doctor: () => get<DoctorReport>("/api/doctor"),

  trace: (limit: number) => get<{ events: TraceEvent[] }>(`/api/trace?limit=${limit}`),

  sendMessage: (text: string) => post<{ turn: string }>("/api/session/messages", { text }),
  cancel: () => post<{ ok: boolean }>("/api/session/cancel"),
  compact: (instructions: string | null = null) => post<{ ok: boolean }>("/api/session/compact", { instructions }),
  history: () => get<History>("/api/session/history"),
  rewindPreview: (turn: number) => get<RewindPreview>(`/api/session/rewind?turn=${turn}`),
  rewind: (turn: number, conversation: boolean) => post<{ ok: boolean }>("/api/session/rewind", { turn, conversation }),
  answer: (id: string, answer: ApprovalAnswer) => post<{ ok: boolean }>(`/api/approvals/${seg(id)}`, answer),
};

/** The message of any thrown value, for an error line in a view. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
