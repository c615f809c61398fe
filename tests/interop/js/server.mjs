// A real A2A server built with the official JS SDK (@a2a-js/sdk), for a2a-anyio's interop tests.
//
//     node tests/interop/js/server.mjs [--mode strict|compat|grpc] [--port 0]
//
// Binds 127.0.0.1 (port 0 = a free port chosen by the OS), prints exactly one line
// `READY http://127.0.0.1:<port>` on stdout once it accepts connections, and exits 0 on SIGTERM
// or SIGINT.
//
// Endpoints, all built with the SDK's own Express handlers around one DefaultRequestHandler:
//
//   GET  /.well-known/agent-card.json   the card (the SDK serves no /.well-known/agent.json)
//   POST /a2a/jsonrpc                   JSON-RPC binding
//   /a2a/rest/...                       HTTP+JSON binding (v1.0 paths; v0.3 /v1/... paths too
//                                       in compat mode)
//
// Modes:
//
//   strict  v1.0 only; the card lists JSONRPC 1.0 then HTTP+JSON 1.0.
//   compat  `legacyCompat: { enabled: true }` on the card, JSON-RPC and REST handlers, and the
//           card repeats both interfaces at protocolVersion 0.3. JSON-RPC routes by method name
//           (PascalCase -> v1.0, anything else -> v0.3); the card handler answers a request
//           without `A2A-Version` (or with 0.3) with the hybrid v0.3 card.
//   grpc    the SDK's gRPC services on @grpc/grpc-js (`grpcService`, v1.0, and
//           `legacyGrpcService`, v0.3) on a port of their own; the HTTP server serves only the
//           card, which lists GRPC 1.0 then GRPC 0.3, both at the bare `127.0.0.1:<grpc port>`.
//
// The agent is the scripted one of tests/interop/sdk_server.py, chosen by the text of the
// first text part of the user's message:
//
//   message...  a single agent Message `pong: <text>` (no task)
//   stream...   submitted -> working ("working") -> three chunks of artifact `report`
//               -> completed, ~50 ms apart
//   slow...     working, then waits up to 30 s; cancelling the task ends it as canceled
//   input...    input-required ("need more input"); a follow-up message on the same task
//               completes it with an `echo` artifact of the new text
//   fail...     failed ("it failed")
//   otherwise   working -> artifact `echo` (`echo: <text>`) [+ artifact `data` holding the
//               first data part unchanged] -> completed
//
// Push configs are stored and served but never delivered (a no-op sender).

import http from 'node:http';
import { parseArgs } from 'node:util';

import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
  UserBuilder,
} from '@a2a-js/sdk/server/express';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { LegacyA2AService, legacyGrpcService } from '@a2a-js/sdk/compat/v0_3/server/grpc';

const HOST = '127.0.0.1';
const JSONRPC_PATH = '/a2a/jsonrpc';
const REST_PATH = '/a2a/rest';
const SLOW_TIMEOUT_MS = 30_000;
const STREAM_DELAY_MS = 50;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => new Date().toISOString();

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function firstText(message) {
  for (const part of message?.parts ?? []) {
    if (part.content?.$case === 'text') return part.content.value;
  }
  return '';
}

function firstDataPart(message) {
  for (const part of message?.parts ?? []) {
    if (part.content?.$case === 'data') return part;
  }
  return undefined;
}

function agentMessage(text, taskId, contextId) {
  return {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    taskId: taskId ?? '',
    contextId: contextId ?? '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function status(state, message) {
  return { state, message, timestamp: now() };
}

class ScriptedAgentExecutor {
  // task id -> { contextId, cancel: () => void } for tasks this executor started.
  tasks = new Map();

  async execute(requestContext, eventBus) {
    const message = requestContext.userMessage;
    const text = firstText(message);
    const current = requestContext.task;
    const taskId = requestContext.taskId;
    const contextId = requestContext.contextId;
    const publishStatus = (state, msg) =>
      eventBus.publish(
        AgentEvent.statusUpdate({ taskId, contextId, status: status(state, msg), metadata: undefined })
      );
    const publishArtifact = (parts, { name, artifactId, append = false, lastChunk = false }) =>
      eventBus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: artifactId ?? crypto.randomUUID(),
            name,
            description: '',
            parts,
            metadata: undefined,
            extensions: [],
          },
          append,
          lastChunk,
          metadata: undefined,
        })
      );

    // A follow-up message on a task parked in input-required.
    if (current && current.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      eventBus.publish(AgentEvent.task(current)); // every turn starts with a Task or a Message
      publishStatus(TaskState.TASK_STATE_WORKING, undefined);
      publishArtifact([textPart(`echo: ${text}`)], { name: 'echo' });
      publishStatus(TaskState.TASK_STATE_COMPLETED, undefined);
      return;
    }

    if (text.startsWith('message')) {
      eventBus.publish(AgentEvent.message(agentMessage(`pong: ${text}`, undefined, contextId)));
      return;
    }

    // Every other behaviour works on a task: publish it first (state submitted).
    this.tasks.set(taskId, { contextId, cancel: () => {} });
    eventBus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED, undefined),
        artifacts: [],
        history: [message],
        metadata: undefined,
      })
    );

    if (text.startsWith('stream')) {
      await sleep(STREAM_DELAY_MS);
      publishStatus(TaskState.TASK_STATE_WORKING, agentMessage('working', taskId, contextId));
      const chunks = ['part 1', ' part 2', ' part 3'];
      for (const [index, chunk] of chunks.entries()) {
        await sleep(STREAM_DELAY_MS);
        publishArtifact([textPart(chunk)], {
          name: 'report',
          artifactId: 'report',
          append: index > 0,
          lastChunk: index === chunks.length - 1,
        });
      }
      await sleep(STREAM_DELAY_MS);
      publishStatus(TaskState.TASK_STATE_COMPLETED, undefined);
    } else if (text.startsWith('slow')) {
      publishStatus(TaskState.TASK_STATE_WORKING, undefined);
      const canceled = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), SLOW_TIMEOUT_MS);
        this.tasks.get(taskId).cancel = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      // When cancelled, cancelTask() below has already published the canceled state.
      if (!canceled) {
        publishArtifact([textPart(`echo: ${text}`)], { name: 'echo' });
        publishStatus(TaskState.TASK_STATE_COMPLETED, undefined);
      }
    } else if (text.startsWith('input')) {
      publishStatus(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('need more input', taskId, contextId));
    } else if (text.startsWith('fail')) {
      publishStatus(TaskState.TASK_STATE_FAILED, agentMessage('it failed', taskId, contextId));
    } else {
      publishStatus(TaskState.TASK_STATE_WORKING, undefined);
      publishArtifact([textPart(`echo: ${text}`)], { name: 'echo' });
      const data = firstDataPart(message);
      if (data) publishArtifact([structuredClone(data)], { name: 'data' });
      publishStatus(TaskState.TASK_STATE_COMPLETED, undefined);
    }
  }

  cancelTask = async (taskId, eventBus) => {
    const entry = this.tasks.get(taskId);
    const contextId = entry?.contextId ?? '';
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_CANCELED, agentMessage('canceled', taskId, contextId)),
        metadata: undefined,
      })
    );
    entry?.cancel();
  };
}

function buildCard(baseUrl, mode, grpcTarget) {
  let interfaces = [
    { url: `${baseUrl}${JSONRPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${baseUrl}${REST_PATH}`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  ];
  if (grpcTarget) {
    interfaces = ['1.0', '0.3'].map((protocolVersion) => ({
      url: grpcTarget,
      protocolBinding: 'GRPC',
      tenant: '',
      protocolVersion,
    }));
  }
  return {
    name: 'JS SDK Test Agent',
    description: 'Scripted A2A agent built with the official @a2a-js/sdk, used by interop tests.',
    supportedInterfaces:
      mode === 'compat' ? duplicateInterfacesForLegacy(interfaces, ['JSONRPC', 'HTTP+JSON']) : interfaces,
    provider: { organization: 'a2a-anyio tests', url: 'https://example.com/a2a-anyio' },
    version: '1.2.3',
    documentationUrl: 'https://example.com/a2a-anyio/docs',
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
    // Declared only: the server does not check any credential.
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { scheme: 'Bearer', bearerFormat: 'JWT', description: 'Declared for card tests; not enforced.' },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Echoes the text it receives; keywords select scripted behaviours.',
        tags: ['echo', 'test'],
        examples: ['hello', 'message ping', 'stream', 'slow', 'input', 'fail'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

function buildExtendedCard(card) {
  const extended = structuredClone(card);
  extended.skills.push({
    id: 'extended-skill',
    name: 'Extended skill',
    description: 'Only listed on the extended agent card.',
    tags: ['extended'],
    examples: [],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  });
  return extended;
}

function mountA2A(app, baseUrl, mode, grpcServer) {
  const card = buildCard(baseUrl, mode, grpcServer && `${HOST}:${grpcServer.port}`);
  const extended = buildExtendedCard(card);
  const pushStore = new InMemoryPushNotificationStore();
  const noopSender = { send: async () => {} };
  const requestHandler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new ScriptedAgentExecutor(),
    undefined, // default event bus manager
    pushStore,
    noopSender,
    // A function provider: served to every caller (an object is only served to authenticated users).
    async () => extended
  );
  const legacyCompat = { enabled: mode === 'compat' };
  const userBuilder = UserBuilder.noAuthentication;
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  if (grpcServer) {
    grpcServer.server.addService(A2AService, grpcService({ requestHandler, userBuilder }));
    grpcServer.server.addService(LegacyA2AService, legacyGrpcService({ requestHandler, userBuilder }));
    return;
  }
  app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }));
  app.use(REST_PATH, restHandler({ requestHandler, userBuilder, legacyCompat }));
}

function main() {
  const { values } = parseArgs({
    options: {
      mode: { type: 'string', default: 'strict' },
      port: { type: 'string', default: '0' },
    },
  });
  if (!['strict', 'compat', 'grpc'].includes(values.mode)) {
    console.error(`--mode must be strict, compat or grpc, not ${values.mode}`);
    process.exit(2);
  }
  if (values.mode === 'grpc') {
    const server = new grpc.Server();
    server.bindAsync(`${HOST}:0`, grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) {
        console.error('gRPC server failed:', err);
        process.exit(1);
      }
      serve(values, { server, port });
    });
    return;
  }
  serve(values, null);
}

function serve(values, grpcServer) {
  const app = express();
  const server = http.createServer(app);
  server.on('error', (err) => {
    console.error('server failed:', err);
    process.exit(1);
  });
  server.listen(Number(values.port), HOST, () => {
    const baseUrl = `http://${HOST}:${server.address().port}`;
    mountA2A(app, baseUrl, values.mode, grpcServer);
    process.stdout.write(`READY ${baseUrl}\n`);
  });
  const stop = () => {
    grpcServer?.server.forceShutdown();
    server.close(() => process.exit(0));
    server.closeAllConnections(); // open SSE streams would otherwise hold close() forever
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
