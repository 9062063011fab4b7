// One EventSource for the whole page and the state every view shares: server dots, pending approvals,
// install progress, the session transcript and the trace. Views read it; only this module writes it.
import { reactive, ref } from "vue";
import {
  api,
  type ApprovalRequest,
  type ContextMeter,
  type ContextWarning,
  type PlanEntry,
  type Server,
  type ServerStatus,
  type State,
  type TraceEvent,
} from "./api";

export interface InstallStep {
  step: string;
  message: string;
}

export interface InstallJob {
  steps: InstallStep[];
  finished: { outcome: string; tools: string[]; diagnostic: string | null; server: string | null; notes: string[] } | null;
}

export interface PluginInstallJob {
  steps: string[];
  finished: {
    outcome: "installed" | "installed_disabled" | "denied" | "error";
    version: string | null;
    path: string | null;
    reason: string | null;
    applies: string | null;
  } | null;
}

export interface ToolResult {
  /** The result as the card shows it (JSON pretty-printed), capped; `truncated` when there was more. */
  text: string;
  truncated: boolean;
  /** Characters of the whole result the model got. */
  chars: number;
  is_error: boolean;
}

export interface ToolCall {
  call_id: string;
  tool: string;
  arguments: unknown;
  decision: "allow" | "ask" | "deny" | null;
  decision_reason: string | null;
  finished: { ok: boolean; summary: string; duration_ms: number } | null;
  result: ToolResult | null;
  /** A `task` call's subagent: its name and its own calls, nested under the task's card. */
  agent?: string;
  children?: ToolCall[];
}

export type SessionItem =
  | { kind: "user"; text: string; rewind_turn?: number | null }
  | { kind: "assistant"; turn: string | null; text: string; done: boolean }
  | { kind: "tool"; turn: string | null; call: ToolCall }
  | { kind: "error"; turn: string | null; text: string };

export const state = ref<State | null>(null);
export const stateError = ref<string | null>(null);
export const connected = ref(false);
export const servers = ref<Server[]>([]);
export const serversLoaded = ref(false);
export const approvals = ref<ApprovalRequest[]>([]);
export const installs = reactive(new Map<string, InstallJob>());
export const pluginInstalls = reactive(new Map<string, PluginInstallJob>());
export const session = reactive({ items: [] as SessionItem[], turn: null as string | null });
/** Turns whose end the stream has said: a fast turn can end before the request that started it is answered. */
const endedTurns = new Set<string>();

/** The turn a prompt started is running, unless its end has already arrived. */
export function turnStarted(turn: string | null): void {
  session.turn = turn !== null && endedTurns.has(turn) ? null : turn;
}
export const trace = ref<TraceEvent[]>([]);
/** The context window as the agent measured it last, its tool-definitions warning, and a compaction's notice. */
export const context = reactive({
  meter: null as ContextMeter | null,
  warning: null as ContextWarning | null,
  compaction: null as { state: string; text: string } | null,
});
/** The model's plan, and what the last rewind did. */
export const plan = ref<PlanEntry[]>([]);
export const rewound = ref<string | null>(null);
/** Bumped on `config.changed`, so a view can reload what a write elsewhere changed. */
export const configVersion = ref(0);

const TRACE_LIMIT = 500;

let statePoll: ReturnType<typeof setTimeout> | null = null;

/** The model session opens in the background after the page is served (and again after trust). */
export function sessionStarting(current: State | null): boolean {
  return current !== null && current.model.configured && current.model.session === false && !current.model.problem && !current.problem;
}

// Answers to /api/state and the event stream travel apart: a state asked for before an event can arrive after it.
// Each ask is numbered, and each value that events also bring counts its events: a state answer sets it only if none
// came while the answer was on its way (else the event is newer: a plan wiped by a stale state stayed empty).
let stateAsks = 0;
const live = { plan: 0, meter: 0, warning: 0 };

export async function loadState(): Promise<void> {
  const asked = ++stateAsks;
  const seen = { ...live };
  try {
    const fresh = await api.state();
    if (asked !== stateAsks) return; // a later ask is on its way: its answer is the newer one
    state.value = fresh;
    stateError.value = null;
    if (live.meter === seen.meter) context.meter = fresh.context ?? context.meter;
    if (live.warning === seen.warning) context.warning = fresh.context_warning ?? context.warning;
    if (live.plan === seen.plan) plan.value = fresh.plan ?? plan.value;
  } catch (error) {
    if (asked !== stateAsks) return;
    stateError.value = error instanceof Error ? error.message : String(error);
  }
  // no event says "the session is open": ask again shortly while it is starting
  if (statePoll === null && sessionStarting(state.value)) {
    statePoll = setTimeout(() => {
      statePoll = null;
      loadState().catch(() => undefined);
    }, 500);
  }
}

let serversReload: ReturnType<typeof setTimeout> | null = null;

export async function loadServers(): Promise<void> {
  servers.value = (await api.servers()).servers;
  serversLoaded.value = true;
}

/** Reload the server list soon, once for a burst of events (tools appear when a server becomes ready). */
function reloadServersSoon(): void {
  if (serversReload !== null) return;
  serversReload = setTimeout(() => {
    serversReload = null;
    loadServers().catch(() => undefined);
  }, 250);
}

function findCall(callId: string): ToolCall | null {
  const within = (calls: ToolCall[]): ToolCall | null => {
    for (const call of calls) {
      const found = call.call_id === callId ? call : within(call.children ?? []);
      if (found) return found;
    }
    return null;
  };
  return within(session.items.flatMap((item) => (item.kind === "tool" ? [item.call] : [])));
}

function assistantItem(turn: string) {
  const last = session.items[session.items.length - 1];
  if (last && last.kind === "assistant" && last.turn === turn && !last.done) return last;
  const item = { kind: "assistant" as const, turn, text: "", done: false };
  session.items.push(item);
  return session.items[session.items.length - 1] as typeof item;
}

function pushTrace(event: TraceEvent): void {
  const list = trace.value;
  if (list.some((known) => known.seq === event.seq)) return;
  // most events arrive in order; one from the stream that races the first /api/trace answer may not
  let at = list.length;
  while (at > 0 && (list[at - 1] as TraceEvent).seq > event.seq) at -= 1;
  list.splice(at, 0, event);
  if (list.length > TRACE_LIMIT) list.splice(0, list.length - TRACE_LIMIT);
}

type Handler = (data: Record<string, unknown>) => void;

const str = (value: unknown): string => (typeof value === "string" ? value : value == null ? "" : String(value));
const strOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null);

const handlers: Record<string, Handler> = {
  "server.status": (data) => {
    const name = str(data.name);
    const kind = str(data.kind);
    const known = servers.value.find((server) => server.name === name && server.kind === kind);
    if (known) {
      known.status = str(data.status) as ServerStatus;
      known.label = strOrNull(data.label) ?? known.label;
      known.reason = strOrNull(data.reason);
    }
    reloadServersSoon();
  },
  "approval.request": (data) => {
    const request = data as unknown as ApprovalRequest;
    if (!approvals.value.some((known) => known.id === request.id)) approvals.value.push(request);
  },
  "approval.resolved": (data) => {
    approvals.value = approvals.value.filter((known) => known.id !== str(data.id));
  },
  "install.progress": (data) => {
    const job = installJob(str(data.job));
    job.steps.push({ step: str(data.step), message: str(data.message) });
  },
  "install.finished": (data) => {
    const job = installJob(str(data.job));
    job.finished = {
      outcome: str(data.outcome),
      tools: Array.isArray(data.tools) ? data.tools.map(str) : [],
      diagnostic: strOrNull(data.diagnostic),
      server: strOrNull(data.server),
      notes: Array.isArray(data.notes) ? data.notes.map(str) : [],
    };
    reloadServersSoon();
  },
  "plugin.install.progress": (data) => {
    pluginInstallJob(str(data.job)).steps.push(str(data.message));
  },
  "plugin.install.finished": (data) => {
    pluginInstallJob(str(data.job)).finished = {
      outcome: str(data.outcome) as NonNullable<PluginInstallJob["finished"]>["outcome"],
      version: strOrNull(data.version),
      path: strOrNull(data.path),
      reason: strOrNull(data.reason),
      applies: strOrNull(data.applies),
    };
  },
  "agent.text": (data) => {
    if (!str(data.delta)) return;
    const item = assistantItem(str(data.turn));
    item.text += str(data.delta);
  },
  "agent.message": (data) => {
    const last = session.items[session.items.length - 1];
    const streaming = last !== undefined && last.kind === "assistant" && !last.done;
    // a reply that is only tool calls has no text: no empty bubble for it
    if (!str(data.text) && !streaming) return;
    const item = assistantItem(str(data.turn));
    item.text = str(data.text);
    item.done = true;
  },
  "agent.tool_call": (data) => {
    const callId = str(data.call_id);
    if (findCall(callId)) return;
    const task = data.parent_call_id ? findCall(str(data.parent_call_id)) : null;
    if (task) {
      // a subagent's call: under the task that runs it, not in the conversation
      task.agent = str(data.agent);
      task.children = [...(task.children ?? []), { call_id: callId, tool: str(data.tool), arguments: data.arguments, decision: null, decision_reason: null, finished: null, result: null }];
      return;
    }
    // a tool call closes the text streamed before it; text after it is a new bubble
    const last = session.items[session.items.length - 1];
    if (last && last.kind === "assistant") last.done = true;
    session.items.push({
      kind: "tool",
      turn: str(data.turn),
      call: {
        call_id: callId,
        tool: str(data.tool),
        arguments: data.arguments,
        decision: null,
        decision_reason: null,
        finished: null,
        result: null,
      },
    });
  },
  "tool.decided": (data) => {
    const call = findCall(str(data.call_id));
    if (!call) return;
    call.decision = str(data.decision) as ToolCall["decision"];
    call.decision_reason = strOrNull(data.reason);
  },
  "tool.finished": (data) => {
    const call = findCall(str(data.call_id));
    if (!call) return;
    call.finished = {
      ok: data.ok === true,
      summary: str(data.summary),
      duration_ms: typeof data.duration_ms === "number" ? data.duration_ms : 0,
    };
  },
  "tool.result": (data) => {
    const call = findCall(str(data.call_id));
    if (!call) return;
    call.result = {
      text: str(data.text),
      truncated: data.truncated === true,
      chars: typeof data.chars === "number" ? data.chars : str(data.text).length,
      is_error: data.is_error === true,
    };
  },
  "user.message": (data) => {
    // every tab shows the prompt, whichever tab sent it
    const last = session.items[session.items.length - 1];
    if (last && last.kind === "assistant") last.done = true;
    const turn = typeof data.rewind_turn === "number" ? data.rewind_turn : null;
    session.items.push({ kind: "user", text: str(data.text), rewind_turn: turn });
    turnStarted(strOrNull(data.turn));
  },
  "agent.turn_ended": (data) => {
    for (const item of session.items) if (item.kind === "assistant") item.done = true;
    endedTurns.add(str(data.turn));
    if (session.turn === str(data.turn)) session.turn = null;
  },
  "agent.context": (data) => {
    live.meter += 1;
    context.meter = data as unknown as ContextMeter;
  },
  "agent.context_warning": (data) => {
    live.warning += 1;
    context.warning = data as unknown as ContextWarning;
  },
  "agent.compaction": (data) => {
    const what = str(data.state);
    const text =
      what === "started"
        ? "compacting: the model summarises the older turns …"
        : what === "done"
          ? `compacted: ${String(data.replaced_messages)} messages summarised, ${String(data.kept_messages)} kept`
          : `not compacted: ${str(data.message)}`;
    context.compaction = { state: what, text };
  },
  "agent.plan": (data) => {
    live.plan += 1;
    plan.value = (data.entries ?? []) as PlanEntry[];
  },
  "agent.rewind": (data) => {
    const list = (key: string) => ((data[key] ?? []) as string[]).join(", ") || "none";
    const cut = typeof data.messages === "number";
    rewound.value = `rewound to before turn ${String(data.turn)}${cut ? " (the conversation too)" : ""}; put back: ${list("restored")}; removed: ${list("removed")}`;
    if (cut) loadHistory().catch(() => undefined);
  },
  "agent.error": (data) => {
    session.items.push({ kind: "error", turn: strOrNull(data.turn), text: str(data.message) });
  },
  "config.changed": () => {
    configVersion.value += 1;
    reloadServersSoon();
    loadState().catch(() => undefined);
  },
};

export function pluginInstallJob(id: string): PluginInstallJob {
  let job = pluginInstalls.get(id);
  if (!job) {
    pluginInstalls.set(id, { steps: [], finished: null });
    job = pluginInstalls.get(id) as PluginInstallJob;
  }
  return job;
}

export function installJob(id: string): InstallJob {
  let job = installs.get(id);
  if (!job) {
    installs.set(id, { steps: [], finished: null });
    job = installs.get(id) as InstallJob;
  }
  return job;
}

/** The events of the conversation: a history loaded from the server already holds those up to its `seq`. */
const SESSION_EVENTS = new Set(["agent.text", "agent.message", "agent.tool_call", "tool.decided", "tool.finished", "tool.result", "user.message", "agent.turn_ended", "agent.error"]);
let historySeq = 0;
/** Conversation events that arrive while the history loads: applied after it, those it does not cover. */
let waiting: { type: string; seq: number; data: Record<string, unknown> }[] | null = null;

/** The conversation so far, from the session's own record (a reload, a second tab, a resumed session). */
export async function loadHistory(): Promise<void> {
  waiting = [];
  try {
    const history = await api.history();
    historySeq = history.seq;
    session.items.splice(0, session.items.length, ...(history.items as SessionItem[]));
    session.turn = history.turn;
  } finally {
    const held = waiting ?? [];
    waiting = null;
    for (const event of held) if (event.seq > historySeq) handlers[event.type]?.(event.data);
  }
}

let source: EventSource | null = null;

export function connectEvents(): void {
  if (source) return;
  source = new EventSource("/api/events");
  source.onopen = () => {
    connected.value = true;
    // the server replays what a reconnect missed (Last-Event-ID) while it keeps it; a reload covers the rest
    loadServers().catch(() => undefined);
    loadState().catch(() => undefined);
  };
  source.onerror = () => {
    connected.value = false;
  };
  const types = [...Object.keys(handlers), "trace"];
  for (const type of types) {
    source.addEventListener(type, (message: MessageEvent<string>) => {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(message.data) as Record<string, unknown>;
      } catch {
        return;
      }
      if (type === "trace") {
        pushTrace(data as unknown as TraceEvent);
        return;
      }
      // the server's trace already holds the Kairox event behind each typed one
      if (SESSION_EVENTS.has(type)) {
        const seq = Number(message.lastEventId);
        if (waiting !== null) {
          waiting.push({ type, seq, data });
          return;
        }
        if (seq <= historySeq) return;
      }
      handlers[type]?.(data);
    });
  }
}

export async function loadTrace(): Promise<void> {
  const events = (await api.trace(TRACE_LIMIT)).events;
  for (const event of events) pushTrace(event);
}
