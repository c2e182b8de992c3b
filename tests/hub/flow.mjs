// kerf's hub driven by the official SignalR JavaScript client (@microsoft/signalr), as a
// customer's program would. tests/hub.rs runs it with the server's address, keys and job ids
// in the environment and reads the transcript it prints: one JSON object per line.
import * as signalR from "@microsoft/signalr";
import { attempt, say, until } from "./common.mjs";

const base = process.env.KERF_BASE;
const key = process.env.KERF_KEY;
const held = process.env.KERF_HELD;          // a short held nest: start it, watch it end
const long = process.env.KERF_LONG;          // a long held nest: start it, stop it early
const foreign = process.env.KERF_FOREIGN;    // another account's job
const dropped = process.env.KERF_DROP;       // a held nest watched by a connection that drops

function connect(token) {
  return new signalR.HubConnectionBuilder()
    .withUrl(`${base}/hubs/nesting`, {
      accessTokenFactory: () => token,
      transport: signalR.HttpTransportType.WebSockets,
    })
    .configureLogging(signalR.LogLevel.None)
    .build();
}

const hub = connect(key);
const results = [];
const progress = [];
const failures = [];
hub.on("NestingResult", (r) => {
  results.push(r);
  say("event NestingResult", { RequestId: r.RequestId, NestingStatus: r.Status.NestingStatus, ResultIdentity: r.Status.ResultIdentity, PartsPlaced: r.Status.PartsPlaced, Utilisation: r.Status.Utilisation });
});
hub.on("NestingProgress", (p) => {
  progress.push(p);
  say("event NestingProgress", p);
});
hub.on("NestingFailed", (f) => {
  failures.push(f);
  say("event NestingFailed", f);
});
const ready = [];
hub.on("ExportReady", (e) => {
  ready.push(e);
  say("event ExportReady", e);
});

// GET /v1/nesting/export/cached, as any HTTP client would
async function cached(id, type) {
  const r = await fetch(`${base}/v1/nesting/export/cached?RequestId=${id}&ResponseType=${type}`, {
    headers: { Authorization: `Bearer ${key}`, Accept: "application/json" },
  });
  const body = await r.json();
  return { status: r.status, Ready: body.Ready, Error: body.Error, ResponseType: body.ResponseType, ResultId: body.ResultId, PayloadBytes: body.PayloadJson ? body.PayloadJson.length : 0, PayloadRequestId: body.PayloadJson ? JSON.parse(body.PayloadJson).RequestId ?? null : null, ExpiresUtc: body.ExpiresUtc };
}

await hub.start();
say("connected", { state: hub.state });

// a held nest: subscribe, start it, watch its results until the final one
await attempt("SubscribeToNest held", () => hub.invoke("SubscribeToNest", held));
await attempt("StartNesting held", () => hub.invoke("StartNesting", held));
await until("the held nest's final result", () => results.some((r) => r.RequestId === held && r.Status.NestingStatus === 1));
say("held done", { results: results.filter((r) => r.RequestId === held).length, progress: progress.filter((p) => p.RequestId === held).length });

// a long nest: start it, stop it once it has a result, and get its best as the final one
const startedAt = Date.now();
await attempt("StartNesting long", () => hub.invoke("StartNesting", long));
await until("the long nest's first progress", () => progress.some((p) => p.RequestId === long));
await attempt("StopNesting long", () => hub.invoke("StopNesting", long));
await until("the long nest's final result", () => results.some((r) => r.RequestId === long && r.Status.NestingStatus === 1));
say("long done", { seconds: (Date.now() - startedAt) / 1000 });
await attempt("StopNesting long again", () => hub.invoke("StopNesting", long));

// bad invocations: each gets an error, the connection stays
await attempt("unknown method", () => hub.invoke("Nope", held));
await attempt("no arguments", () => hub.invoke("SubscribeToNest"));
await attempt("wrong argument type", () => hub.invoke("SubscribeToNest", 42));
await attempt("another account's job", () => hub.invoke("SubscribeToNest", foreign));
await attempt("start a job twice", () => hub.invoke("StartNesting", held));
await attempt("GenerateExport bad type", () => hub.invoke("GenerateExport", held, "", "Bitmap"));
await attempt("GenerateExport no arguments", () => hub.invoke("GenerateExport", held));
say("cached before", await cached(held, "Result"));

// an export through the hub: ExportReady, then read from the cache
await attempt("GenerateExport", () => hub.invoke("GenerateExport", held, "", "Result"));
await until("ExportReady", () => ready.length > 0);
say("cached after", await cached(held, "Result"));
say("cached other type", await cached(held, "DXF"));
await attempt("GenerateExport again", () => hub.invoke("GenerateExport", held, null, 0));
await until("a second ExportReady", () => ready.length > 1);
say("still connected", { state: hub.state });

// a second connection, late: it gets the latest result at once
const late = connect(key);
const lateResults = [];
late.on("NestingResult", (r) => lateResults.push(r));
await late.start();
await attempt("late SubscribeToNest", () => late.invoke("SubscribeToNest", held));
await until("the late subscriber's result", () => lateResults.length > 0);
say("late result", { RequestId: lateResults[0].RequestId, NestingStatus: lateResults[0].Status.NestingStatus });
await late.stop();

// a connection dropped mid-nest: the nest goes on, a new connection gets its final result
const first = connect(key);
const firstProgress = [];
first.on("NestingProgress", (p) => firstProgress.push(p));
await first.start();
await attempt("StartNesting dropped", () => first.invoke("StartNesting", dropped));
await until("the dropped nest's first progress", () => firstProgress.length > 0);
await first.stop();
say("dropped mid-nest", { progressSeen: firstProgress.length, state: first.state });
const second = connect(key);
const secondResults = [];
second.on("NestingResult", (r) => secondResults.push(r));
await second.start();
await attempt("SubscribeToNest after the drop", () => second.invoke("SubscribeToNest", dropped));
await until("the dropped nest's final result", () => secondResults.some((r) => r.Status.NestingStatus === 1));
say("final after the drop", { RequestId: dropped, NestingStatus: 1, PartsPlaced: secondResults.at(-1).Status.PartsPlaced });
await second.stop();

await hub.stop();
say("stopped", { state: hub.state });

// a wrong key is refused at negotiate
const wrong = connect("kerf_0000000000000000_00");
await attempt("wrong key", () => wrong.start());
