// The hub across nodes (issue 19): the client is connected to one front end while the nests
// run on worker nodes, so every event reaches it over the cluster bus (PostgreSQL
// LISTEN/NOTIFY), and its stop reaches the worker that runs the nest the same way.
// tests/cluster.rs runs it and reads the transcript: one JSON object per line.
import * as signalR from "@microsoft/signalr";
import { attempt, say, until } from "./common.mjs";

const base = process.env.KERF_BASE;
const key = process.env.KERF_KEY;
const held = process.env.KERF_HELD;   // a short held nest: start it, watch it end
const long = process.env.KERF_LONG;   // a long held nest: start it, stop it early

const hub = new signalR.HubConnectionBuilder()
  .withUrl(`${base}/hubs/nesting`, {
    accessTokenFactory: () => key,
    transport: signalR.HttpTransportType.WebSockets,
  })
  .configureLogging(signalR.LogLevel.None)
  .build();
const results = [];
const progress = [];
hub.on("NestingResult", (r) => {
  results.push(r);
  say("event NestingResult", { RequestId: r.RequestId, NestingStatus: r.Status.NestingStatus, PartsPlaced: r.Status.PartsPlaced });
});
hub.on("NestingProgress", (p) => progress.push(p));
const final = (id) => results.some((r) => r.RequestId === id && r.Status.NestingStatus === 1);

await hub.start();
say("connected", { state: hub.state });
await attempt("StartNesting held", () => hub.invoke("StartNesting", held));
await until("the held nest's final result", () => final(held));
say("held done", { progress: progress.filter((p) => p.RequestId === held).length });

const startedAt = Date.now();
await attempt("StartNesting long", () => hub.invoke("StartNesting", long));
await until("the long nest's first progress", () => progress.some((p) => p.RequestId === long));
await attempt("StopNesting long", () => hub.invoke("StopNesting", long));
await until("the long nest's final result", () => final(long));
say("long done", { seconds: (Date.now() - startedAt) / 1000 });
await hub.stop();
