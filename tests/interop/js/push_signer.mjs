// An agent's push sender written with jose (the JOSE library of @a2a-js/sdk, pinned in
// package-lock.json): it makes an ES256 key, serves its JWK Set on 127.0.0.1, prints
// "READY <jwks url>", waits for "GO <receiver url> <issuer> <task id>" on stdin, then posts
// signed notifications and prints one JSON line per post: {"case", "status"}.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createInterface } from "node:readline";
import { SignJWT, exportJWK, generateKeyPair } from "jose";

const KID = "node-1";
const { publicKey, privateKey } = await generateKeyPair("ES256");
const jwk = { ...(await exportJWK(publicKey)), kid: KID, alg: "ES256", use: "sig" };

const server = createServer((req, res) => {
  res.writeHead(req.url === "/jwks.json" ? 200 : 404, { "content-type": "application/json" });
  res.end(JSON.stringify(req.url === "/jwks.json" ? { keys: [jwk] } : {}));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const jku = `http://127.0.0.1:${server.address().port}/jwks.json`;
console.log(`READY ${jku}`);

const lines = createInterface({ input: process.stdin });
const [, receiver, issuer, taskId] = (await lines[Symbol.asyncIterator]().next()).value.split(" ");

function sign({ audience = receiver, task = taskId, jti = randomUUID() } = {}) {
  return new SignJWT({ taskId: task })
    .setProtectedHeader({ alg: "ES256", kid: KID, jku, typ: "JWT" })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime("2m")
    .setJti(jti)
    .sign(privateKey);
}

async function post(name, token) {
  const body = {
    statusUpdate: { taskId, contextId: "c-1", status: { state: "TASK_STATE_COMPLETED" } },
  };
  const answer = await fetch(receiver, {
    method: "POST",
    headers: { "content-type": "application/a2a+json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  console.log(JSON.stringify({ case: name, status: answer.status }));
}

const token = await sign();
await post("signed", token);
await post("replayed", token);
await post("other-audience", await sign({ audience: "https://elsewhere.example/hooks" }));
await post("other-task", await sign({ task: "t-other" }));
server.close();
lines.close();
