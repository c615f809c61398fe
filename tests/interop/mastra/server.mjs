// A Mastra agent served by Mastra's own A2A routes, for a2a-anyio's interop tests.
//
//     node tests/interop/mastra/server.mjs [--port 0]
//
// Binds 127.0.0.1 (port 0 = a free port chosen by the OS), prints exactly one line
// `READY http://127.0.0.1:<port>` on stdout once it accepts connections, and exits 0 on SIGTERM
// or SIGINT.
//
// The server is Mastra's Hono adapter (@mastra/hono) mounting every route of @mastra/server
// under its default `/api` prefix; the A2A ones, per agent id (here `echo`):
//
//   GET  /api/.well-known/echo/agent-card.json   the card (v0.3: protocolVersion 0.3.0)
//   POST /api/a2a/echo                           JSON-RPC (v0.3; `A2A-Version: 1.0` switches
//                                                the payloads to v1.0, the method names stay)
//
// Nothing is served at /.well-known/agent-card.json, nor under /api/a2a/echo/.
//
// The agent is a Mastra Agent whose model is the `ai` package's MockLanguageModelV2 (no LLM is
// called), scripted by the text of the user's last message:
//
//   stream...   answers "part 1", " part 2", " part 3" as three text deltas, ~50 ms apart
//   slow...     answers after 30 s (sooner if the run is aborted)
//   input...    calls the tool `ask`, which suspends the run with "need more input" (Mastra:
//               input-required); the follow-up message resumes it and the answer is
//               `echo: <follow-up text>`
//   fail...     the model throws "it failed"
//   message...  `pong: <text>`
//   otherwise   `echo: <text>`
//
// Mastra puts the answer in an artifact `response.txt`; it has no way for an agent to answer
// with a Message, and refuses a message with a data part.

import { parseArgs } from 'node:util';

import { serve } from '@hono/node-server';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { MastraServer } from '@mastra/hono';
import { InMemoryTaskStore } from '@mastra/server/a2a/store';
import { MockLanguageModelV2 } from 'ai/test';
import { Hono } from 'hono';
import { z } from 'zod';

const HOST = '127.0.0.1';
const AGENT_ID = 'echo';
const SLOW_TIMEOUT_MS = 30_000;
const STREAM_DELAY_MS = 50;
const USAGE = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason ?? new Error('aborted'));
      },
      { once: true }
    );
  });
}

function lastText(prompt, role) {
  for (const message of [...prompt].reverse()) {
    if (message.role !== role || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'text') return part.text;
  }
  return '';
}

function lastToolOutput(prompt) {
  for (const message of [...prompt].reverse()) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') return part.output?.value;
  }
  return undefined;
}

// What the model answers: text chunks, or a call of the tool `ask`.
async function answer({ prompt, abortSignal }) {
  const asked = lastToolOutput(prompt);
  if (asked !== undefined) return { chunks: [`echo: ${asked.answer}`] };
  const text = lastText(prompt, 'user');
  if (text.startsWith('fail')) throw new Error('it failed');
  if (text.startsWith('input')) return { toolCall: { toolName: 'ask', input: '{}' } };
  if (text.startsWith('slow')) await sleep(SLOW_TIMEOUT_MS, abortSignal);
  if (text.startsWith('stream')) return { chunks: ['part 1', ' part 2', ' part 3'], delay: STREAM_DELAY_MS };
  if (text.startsWith('message')) return { chunks: [`pong: ${text}`] };
  return { chunks: [`echo: ${text}`] };
}

const model = new MockLanguageModelV2({
  doGenerate: async (options) => {
    const said = await answer(options);
    const content = said.toolCall
      ? [{ type: 'tool-call', toolCallId: crypto.randomUUID(), ...said.toolCall }]
      : [{ type: 'text', text: said.chunks.join('') }];
    return { content, finishReason: said.toolCall ? 'tool-calls' : 'stop', usage: USAGE, warnings: [] };
  },
  doStream: async (options) => {
    const said = await answer(options);
    const stream = new ReadableStream({
      async start(controller) {
        controller.enqueue({ type: 'stream-start', warnings: [] });
        if (said.toolCall) {
          controller.enqueue({ type: 'tool-call', toolCallId: crypto.randomUUID(), ...said.toolCall });
        } else {
          controller.enqueue({ type: 'text-start', id: 'text' });
          for (const chunk of said.chunks) {
            if (said.delay) await sleep(said.delay);
            controller.enqueue({ type: 'text-delta', id: 'text', delta: chunk });
          }
          controller.enqueue({ type: 'text-end', id: 'text' });
        }
        controller.enqueue({ type: 'finish', finishReason: said.toolCall ? 'tool-calls' : 'stop', usage: USAGE });
        controller.close();
      },
    });
    return { stream };
  },
});

const ask = createTool({
  id: 'ask',
  description: 'Asks the user for more input.',
  inputSchema: z.object({}),
  suspendSchema: z.object({ message: z.string() }),
  resumeSchema: z.any(),
  execute: async (_input, context) => {
    const resumeData = context?.agent?.resumeData;
    if (resumeData === undefined) return await context?.agent?.suspend({ message: 'need more input' });
    return { answer: typeof resumeData === 'string' ? resumeData : JSON.stringify(resumeData) };
  },
});

async function main() {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
  const agent = new Agent({
    id: AGENT_ID,
    name: 'Echo',
    instructions: 'Echoes the text it receives; keywords select scripted behaviours.',
    model,
    tools: { ask },
  });
  // The store keeps a suspended run's snapshot, so that input-required can be resumed.
  const mastra = new Mastra({ agents: { [AGENT_ID]: agent }, storage: new InMemoryStore(), logger: false });
  const app = new Hono();
  await new MastraServer({ app, mastra, taskStore: new InMemoryTaskStore() }).init();
  const server = serve({ fetch: app.fetch, hostname: HOST, port: Number(values.port) }, (info) => {
    process.stdout.write(`READY http://${HOST}:${info.port}\n`);
  });
  server.on('error', (err) => {
    console.error('server failed:', err);
    process.exit(1);
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections(); // open SSE streams would otherwise hold close() forever
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

await main();
