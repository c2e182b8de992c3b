// kerf dashboard, live view of one nest: the official SignalR client (vendor/signalr.min.js)
// on kerf's hub, with the Admin key the dashboard keeps in this tab's session storage.
// Figures from NestingProgress and NestingResult, the layout as the render of the latest
// result, Stop (StopNesting), Start for a held nest (StartNesting), exports (GenerateExport,
// then the export cache). Server text goes into the page with textContent only.
"use strict";

const KEY_SLOT = "kerf.dashboard.key";
const EXPORT_TYPES = ["Result", "Render", "DXF", "ReportSource", "PartsExport"];
const $ = (id) => document.getElementById(id);
const key = sessionStorage.getItem(KEY_SLOT);
const nestId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
let latestResult = null;
let renderedResult = null;
let state = "Queued";

function flash(message, kind) {
  const box = $("flash");
  box.textContent = message;
  box.className = "alert" + (kind ? " alert-" + kind : "");
  box.hidden = false;
}

function setState(s) {
  state = s;
  const badge = $("nest-state");
  badge.textContent = s;
  badge.className = "badge " + ({ Completed: "badge-ok", Failed: "badge-bad", Running: "badge-info", Held: "badge-warn", Queued: "" }[s] || "");
  $("stop").hidden = s !== "Running";
  $("start").hidden = s !== "Held";
  for (const b of document.querySelectorAll("#export-buttons button")) b.disabled = !latestResult;
}

function figures(f) {
  if (f.Utilisation !== undefined) $("fig-utilisation").textContent = Number(f.Utilisation).toFixed(1) + " %";
  if (f.PartsPlaced !== undefined) $("fig-parts").textContent = f.PartsPlaced;
  if (f.PartsRequested !== undefined) $("fig-parts-sub").textContent = "of " + f.PartsRequested + " requested";
  if (f.SheetsUsed !== undefined) $("fig-sheets").textContent = f.SheetsUsed;
  if (f.ElapsedSeconds !== undefined) $("fig-elapsed").textContent = Number(f.ElapsedSeconds).toFixed(1) + " s";
}

async function api(path) {
  const r = await fetch(path, { headers: { Accept: "application/json", Authorization: "Bearer " + key } });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error((body && (body.Error || body.ErrorReason)) || r.statusText);
  return body;
}

// the render of the latest result; one at a time, always the newest
async function drawLatest() {
  if (!latestResult || latestResult === renderedResult || drawLatest.busy) return;
  drawLatest.busy = true;
  const want = latestResult;
  try {
    const r = await api(`/v1/nesting/render?RequestId=${encodeURIComponent(nestId)}&ResultIdentity=${encodeURIComponent(want)}`);
    $("layout").src = `data:${r.RenderFormat === "svg" ? "image/svg+xml" : "image/png"};base64,${r.Base64EncodedRendering}`;
    $("layout").hidden = false;
    $("layout-empty").hidden = true;
    renderedResult = want;
  } catch (e) {
    $("layout-note").textContent = "The layout could not be drawn: " + e.message;
  } finally {
    drawLatest.busy = false;
  }
  if (latestResult !== renderedResult) drawLatest();
}

function onResult(r) {
  const s = r.Status || {};
  latestResult = s.ResultIdentity || latestResult;
  figures(s);
  $("fig-result").textContent = s.NestingStatus === 1 ? "final result" : "interim result";
  $("layout-note").textContent = s.NestingStatus === 1 ? "final" : "best so far";
  if (s.NestingStatus === 1) setState("Completed");
  else setState(state === "Queued" || state === "Held" ? "Running" : state);
  drawLatest();
}

function exportRow(e) {
  const download = document.createElement("button");
  download.type = "button";
  download.className = "btn btn-small";
  download.textContent = "Download";
  download.dataset.type = e.ResponseType;
  download.addEventListener("click", async () => {
    try {
      const c = await api(`/v1/nesting/export/cached?RequestId=${encodeURIComponent(nestId)}&ResultIdentity=${encodeURIComponent(e.ResultId)}&ResponseType=${e.ResponseType}`);
      if (!c.Ready) throw new Error(c.Error);
      const url = URL.createObjectURL(new Blob([c.PayloadJson], { type: "application/json" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = `${nestId}-${e.ResponseType}.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) {
      flash(err.message, "error");
    }
  });
  const row = document.createElement("tr");
  row.dataset.export = e.ResponseType;
  for (const text of [e.ResponseType, e.ResultId, new Date(e.ExpiresUtc).toLocaleTimeString()]) {
    const td = document.createElement("td");
    td.textContent = text;
    row.append(td);
  }
  const cell = document.createElement("td");
  cell.className = "actions";
  cell.append(download);
  row.append(cell);
  return row;
}

async function main() {
  $("nest-id").textContent = nestId;
  if (!key) {
    flash("Sign in on the dashboard first: this page uses the Admin key you signed in with.", "error");
    $("nest-state").textContent = "Signed out";
    return;
  }
  const hub = new signalR.HubConnectionBuilder()
    .withUrl("/hubs/nesting", { accessTokenFactory: () => key, transport: signalR.HttpTransportType.WebSockets })
    .withAutomaticReconnect()
    .configureLogging(signalR.LogLevel.Warning)
    .build();
  hub.on("NestingProgress", (p) => {
    if (p.RequestId !== nestId) return;
    if (state === "Queued" || state === "Held") setState("Running");
    figures(p);
  });
  hub.on("NestingResult", (r) => { if (r.RequestId === nestId) onResult(r); });
  hub.on("NestingFailed", (f) => {
    if (f.RequestId !== nestId) return;
    setState("Failed");
    flash(`The nest failed (${f.ErrorCode}): ${f.ErrorReport}`, "error");
  });
  const exportsBody = $("exports-table").querySelector("tbody");
  hub.on("ExportReady", (e) => {
    if (e.RequestId !== nestId) return;
    const old = exportsBody.querySelector(`tr[data-export="${e.ResponseType}"]`);
    if (old) old.remove();
    exportsBody.prepend(exportRow(e));
    $("exports-empty").hidden = true;
  });
  const subscribe = async () => {
    const s = await hub.invoke("SubscribeToNest", nestId);
    setState(s.Status);
  };
  hub.onreconnecting(() => { $("hub-state").textContent = "· reconnecting…"; });
  hub.onreconnected(async () => { $("hub-state").textContent = ""; await subscribe().catch((e) => flash(e.message, "error")); });
  hub.onclose(() => { $("hub-state").textContent = "· disconnected (reload to reconnect)"; });

  for (const type of EXPORT_TYPES) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn btn-small";
    b.textContent = type;
    b.disabled = true;
    b.dataset.type = type;
    b.addEventListener("click", () => hub.invoke("GenerateExport", nestId, latestResult || "", type)
      .then((r) => flash(r.Status === "Ready" ? `${type} is in the cache.` : `${type} is being made…`, "ok"))
      .catch((e) => flash(e.message, "error")));
    $("export-buttons").append(b);
  }
  hub.on("ExportFailed", (e) => {
    if (e.RequestId === nestId) flash(`The ${e.ResponseType} export failed: ${e.Error}`, "error");
  });
  $("start").addEventListener("click", () => hub.invoke("StartNesting", nestId)
    .then(() => { setState("Queued"); flash("Started.", "ok"); })
    .catch((e) => flash(e.message, "error")));
  $("stop").addEventListener("click", () => hub.invoke("StopNesting", nestId)
    .then(() => flash("Stopping: the best layout so far becomes the final result.", "ok"))
    .catch((e) => flash(e.message, "error")));

  try {
    await hub.start();
    await subscribe();
  } catch (e) {
    flash("Could not watch this nest: " + (e.message || e), "error");
    $("nest-state").textContent = "Unavailable";
  }
}

main();
