// An editor for `kairox acp` on the ACP TypeScript SDK's client side, as the SDK's example client drives an agent:
// node acp_editor.mjs PLAN.json -- COMMAND ARGS...   (PLAN: {cwd, prompts, buffers, answers})
// It starts the agent, answers permission requests with the planned option kinds ("cancel" or none: no answer),
// serves reads from its unsaved buffers, keeps writes in them, and prints what it saw as one JSON object.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const command = process.argv.slice(process.argv.indexOf("--") + 1);
const buffers = { ...(plan.buffers ?? {}) };
const answers = [...(plan.answers ?? [])];
const seen = { updates: [], asked: [], written: {} };

const agentProcess = spawn(command[0], command.slice(1), { cwd: plan.cwd, stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => agentProcess.on("exit", (code) => resolve(code)));
const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));

const editor = acp
  .client({ name: "kairox-test-editor" })
  .onRequest("session/request_permission", ({ params }) => {
    seen.asked.push(params);
    const option = params.options.find((o) => o.kind === answers.shift());
    return { outcome: option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" } };
  })
  .onRequest("fs/read_text_file", async ({ params }) => ({
    content: params.path in buffers ? buffers[params.path] : await readFile(params.path, "utf8"),
  }))
  .onRequest("fs/write_text_file", ({ params }) => {
    buffers[params.path] = seen.written[params.path] = params.content;
    return {};
  })
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params.update);
  });

const result = await editor.connectWith(stream, async (agent) => {
  const initialized = await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  const session = await agent.request("session/new", { cwd: plan.cwd, mcpServers: [] });
  const stops = [];
  for (const text of plan.prompts) {
    const answer = await agent.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] });
    stops.push(answer.stopReason);
  }
  return { initialized, sessionId: session.sessionId, modes: session.modes, stops };
});
agentProcess.stdin.end();
const code = await exited;
process.stdout.write(JSON.stringify({ ...result, ...seen, exitCode: code }));
