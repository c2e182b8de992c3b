// kerf dashboard: a small single-page app over kerf's own HTTP API. The Admin key lives in
// sessionStorage only (this tab, until it closes); every call sends it as a Bearer token,
// exactly as any other client would. Text from the server is put into the page with
// textContent, never as HTML.
"use strict";

const KEY_SLOT = "kerf.dashboard.key";
const PAGES = ["keys", "origins", "plan", "jobs"];
const $ = (id) => document.getElementById(id);

let adminKey = sessionStorage.getItem(KEY_SLOT);
let keysCache = [];

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// One call of the API; a refusal becomes an ApiError with the server's own message.
async function api(method, path, body) {
  const headers = { Accept: "application/json", Authorization: "Bearer " + adminKey };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, "The server could not be reached. Check your connection and try again.");
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!response.ok) {
    const message = (data && (data.Error || data.ErrorReason || (data.Errors && data.Errors.join("; ")))) || text || response.statusText;
    if (response.status === 401 && method === "GET" && path !== "/v1/auth/validate") {
      signOut("Your key is no longer valid (revoked, expired or regenerated). Sign in again.");
    } else if (response.status === 403 && method === "GET") {
      // the key lost its Admin type, or may not be used from this page: nothing here works
      signOut(message);
    }
    throw new ApiError(response.status, message);
  }
  return data;
}

// --- elements -------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// A thin bar filled to `share` (0..1); its width is set through the CSSOM, which the page's
// Content-Security-Policy allows (style attributes it does not).
function meter(share, title) {
  const fill = el("span");
  fill.style.width = (Math.max(0, Math.min(1, share)) * 100).toFixed(1) + "%";
  return el("div", { class: "meter", title }, fill);
}

function badge(text, kind) {
  return el("span", { class: "badge" + (kind ? " badge-" + kind : "") }, text);
}

function flash(message, kind) {
  const box = $("flash");
  box.textContent = message;
  box.className = "alert" + (kind ? " alert-" + kind : "");
  box.hidden = false;
  clearTimeout(flash.timer);
  if (kind !== "error") flash.timer = setTimeout(() => { box.hidden = true; }, 6000);
}

function fail(e) {
  flash(e.message || String(e), "error");
}

function formatDate(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (isNaN(d)) return iso;
  if (d.getUTCFullYear() >= 9999) return "Never";
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

function number(v, digits) {
  return Number(v).toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function keyLabel(id) {
  const k = keysCache.find((k) => k.ApiKeyId === id);
  if (!k) return id;
  return k.ClientRef || "(no reference)";
}

function keyStatus(k) {
  if (!k.IsActive && k.CancelledDate) return ["Revoked", "bad"];
  if (k.Expired) return ["Expired", "warn"];
  return ["Active", "ok"];
}

// --- sign in and out ------------------------------------------------------------------------

async function signIn(key) {
  adminKey = key;
  const who = await api("GET", "/v1/auth/validate");
  if (who.KeyType !== "Admin") {
    throw new ApiError(403, "This is a Usage key. The dashboard needs an Admin key of your account.");
  }
  sessionStorage.setItem(KEY_SLOT, key);
  $("who").replaceChildren(el("div", {}, "Account " + who.UserId), el("div", {}, "Key ", el("span", { class: "mono" }, key.split("_")[1])));
  return who;
}

function signOut(message) {
  sessionStorage.removeItem(KEY_SLOT);
  adminKey = null;
  $("app").hidden = true;
  $("signin").hidden = false;
  $("signin-key").value = "";
  const error = $("signin-error");
  error.textContent = message || "";
  error.hidden = !message;
  $("signin-key").focus();
}

$("signin-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const key = $("signin-key").value.trim();
  const error = $("signin-error");
  // a key is kerf_<id>_<secret> in hex: anything else (a truncated paste, a stray character)
  // would fail in the browser before it reached the server, with a misleading message
  if (!/^kerf_[0-9a-f]+_[0-9a-f]+$/.test(key)) {
    error.textContent = "This is not a kerf API key: a key looks like kerf_<key id>_<secret>, in letters a-f and digits. Paste it again in full.";
    error.hidden = false;
    return;
  }
  const button = $("signin-submit");
  button.disabled = true;
  error.hidden = true;
  try {
    await signIn(key);
    $("signin").hidden = true;
    $("app").hidden = false;
    // setting the hash routes (hashchange); otherwise route now
    if (!location.hash) location.hash = "#/keys";
    else route();
  } catch (e) {
    adminKey = null;
    error.textContent = e.status === 401 ? "This key is not valid: it is unknown, revoked, expired or was regenerated." : e.message;
    error.hidden = false;
  } finally {
    button.disabled = false;
  }
});

$("signout").addEventListener("click", () => signOut());

// --- routing ----------------------------------------------------------------------------------

function route() {
  const page = (location.hash.replace(/^#\//, "") || "keys").split("?")[0];
  const current = PAGES.includes(page) ? page : "keys";
  for (const p of PAGES) $("page-" + p).hidden = p !== current;
  document.querySelectorAll(".sidebar a").forEach((a) => a.classList.toggle("active", a.dataset.page === current));
  $("flash").hidden = true;
  ({ keys: loadKeys, origins: loadOrigins, plan: loadPlan, jobs: loadJobs })[current]().catch(fail);
}

window.addEventListener("hashchange", () => { if (adminKey) route(); });

// --- keys -------------------------------------------------------------------------------------

async function loadKeys() {
  keysCache = await api("GET", "/admin/keys");
  const body = $("keys-table").querySelector("tbody");
  body.replaceChildren(...keysCache.map(keyRow));
  $("keys-empty").hidden = keysCache.length > 0;
}

function keyRow(k) {
  const [status, kind] = keyStatus(k);
  const active = status === "Active";
  const weight = el("input", { class: "weight-input", type: "number", min: "0.1", max: "1000", step: "0.1", value: k.Weight, "aria-label": "weight", disabled: !active });
  weight.addEventListener("change", () => act(() => api("PATCH", `/admin/keys/${k.ApiKeyId}/weight`, { Weight: Number(weight.value) }), "Weight of " + (k.ClientRef || k.ApiKeyId) + " set to " + weight.value + "."));
  const type = el("select", { "aria-label": "key type", disabled: !active }, el("option", {}, "Usage"), el("option", {}, "Admin"));
  type.value = k.KeyType;
  type.addEventListener("change", async () => {
    const own = k.ApiKeyId === adminKey.split("_")[1];
    if (own && type.value === "Usage") {
      if (!confirm("Make the key you are signed in with a Usage key? You will be signed out: the dashboard needs an Admin key.")) {
        type.value = k.KeyType;
        return;
      }
      try {
        await api("PATCH", `/admin/keys/${k.ApiKeyId}/type`, { KeyType: "Usage" });
        signOut("Your key is now a Usage key. Sign in with an Admin key to go on.");
      } catch (e) {
        fail(e);
        await loadKeys().catch(fail);
      }
      return;
    }
    await act(() => api("PATCH", `/admin/keys/${k.ApiKeyId}/type`, { KeyType: type.value }), (k.ClientRef || k.ApiKeyId) + " is now a " + type.value + " key.");
  });
  const actions = active
    ? el("span", { class: "row-actions" },
        el("button", { type: "button", class: "btn btn-small", "data-action": "regenerate", onclick: () => regenerate(k) }, "Regenerate"),
        el("button", { type: "button", class: "btn btn-small btn-danger", "data-action": "revoke", onclick: () => revoke(k) }, "Revoke"))
    : el("span", { class: "muted" }, "—");
  return el("tr", { class: active ? "" : "inactive", "data-key": k.ApiKeyId },
    el("td", {}, k.ClientRef || el("span", { class: "muted" }, "(no reference)"), k.Email ? el("span", { class: "sub" }, k.Email) : null),
    el("td", { class: "mono" }, k.ApiKeyId),
    el("td", {}, type),
    el("td", {}, badge(status, kind), k.IsTrial ? " " : null, k.IsTrial ? badge("Trial", "info") : null),
    el("td", { class: "num" }, k.Parallelism),
    el("td", { class: "num" }, weight),
    el("td", {}, k.Expires ? formatDate(k.Expires) : el("span", { class: "muted" }, "Never")),
    el("td", { class: "actions" }, actions));
}

// Runs a change, reports it, and reloads the list (so the page shows what the server holds).
async function act(change, done) {
  try {
    await change();
    flash(done, "ok");
  } catch (e) {
    fail(e);
  }
  await loadKeys().catch(fail);
}

function showSecret(title, secret) {
  $("secret-title").textContent = title;
  $("secret-value").textContent = secret;
  $("secret-copy").textContent = "Copy";
  $("secret-box").hidden = false;
  $("secret-box").scrollIntoView({ block: "nearest" });
}

async function regenerate(k) {
  const name = k.ClientRef || k.ApiKeyId;
  if (!confirm(`Regenerate ${name}? Its current secret stops working at once.`)) return;
  try {
    const fresh = await api("POST", `/admin/keys/${k.ApiKeyId}/regenerate`);
    if (fresh.ApiKey.split("_")[1] === adminKey.split("_")[1]) {
      adminKey = fresh.ApiKey;
      sessionStorage.setItem(KEY_SLOT, adminKey);
    }
    showSecret("New secret for " + name, fresh.ApiKey);
  } catch (e) {
    fail(e);
  }
  await loadKeys().catch(fail);
}

async function revoke(k) {
  const name = k.ClientRef || k.ApiKeyId;
  if (!confirm(`Revoke ${name}? Calls with it fail from now on; this cannot be undone.`)) return;
  await act(() => api("DELETE", `/admin/keys/${k.ApiKeyId}`), name + " is revoked.");
}

$("new-key").addEventListener("click", () => {
  $("create-form").hidden = false;
  $("create-form").querySelector("input").focus();
});
$("create-cancel").addEventListener("click", () => { $("create-form").hidden = true; });
$("create-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const body = { KeyType: f.get("KeyType"), Parallelism: Number(f.get("Parallelism") || 1) };
  if (f.get("Reference")) body.Reference = f.get("Reference");
  if (f.get("Email")) body.Email = f.get("Email");
  if (f.get("Expires")) body.Expires = f.get("Expires") + "T23:59:59Z";
  try {
    const created = await api("POST", "/admin/keys", body);
    ev.target.reset();
    ev.target.hidden = true;
    showSecret("Your new key" + (created.ClientRef ? ": " + created.ClientRef : ""), created.ApiKey);
    await loadKeys();
  } catch (e) {
    fail(e);
  }
});
$("secret-copy").addEventListener("click", async () => {
  const secret = $("secret-value").textContent;
  try {
    await navigator.clipboard.writeText(secret);
  } catch (e) {
    // no clipboard permission (plain http, some browsers): select it for a manual copy
    const range = document.createRange();
    range.selectNodeContents($("secret-value"));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  }
  $("secret-copy").textContent = "Copied";
});
$("secret-done").addEventListener("click", () => {
  $("secret-box").hidden = true;
  $("secret-value").textContent = "";
});

// --- origins ------------------------------------------------------------------------------------

async function loadOrigins() {
  keysCache = await api("GET", "/admin/keys");
  const active = keysCache.filter((k) => keyStatus(k)[0] === "Active");
  const select = $("origins-key");
  const chosen = select.value;
  select.replaceChildren(...active.map((k) => el("option", { value: k.ApiKeyId }, (k.ClientRef || "(no reference)") + " · " + k.ApiKeyId)));
  if (active.some((k) => k.ApiKeyId === chosen)) select.value = chosen;
  await showOrigins();
}

async function showOrigins() {
  const id = $("origins-key").value;
  const body = $("origins-table").querySelector("tbody");
  if (!id) {
    body.replaceChildren();
    $("origins-empty").textContent = "There is no active key.";
    $("origins-empty").hidden = false;
    return;
  }
  const list = await api("GET", `/apikeys/${id}/origins`);
  body.replaceChildren(...list.Origins.map((o) => el("tr", {},
    el("td", { class: "mono" }, o),
    el("td", { class: "actions" }, el("button", { type: "button", class: "btn btn-small btn-danger", onclick: () => removeOrigin(id, o) }, "Remove")))));
  $("origins-empty").textContent = "This key is not limited to any origin.";
  $("origins-empty").hidden = list.Origins.length > 0;
}

async function removeOrigin(id, origin) {
  try {
    await api("DELETE", `/apikeys/${id}/origins`, { Origin: origin });
    flash(origin + " removed.", "ok");
  } catch (e) {
    fail(e);
  }
  await showOrigins().catch(fail);
}

$("origins-key").addEventListener("change", () => showOrigins().catch(fail));
$("origin-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const id = $("origins-key").value;
  const origin = $("origin-input").value.trim();
  try {
    const before = (await api("GET", `/apikeys/${id}/origins`)).Origins;
    const after = (await api("POST", `/apikeys/${id}/origins`, { Origin: origin })).Origins;
    $("origin-input").value = "";
    // the server keeps origins in their canonical form: say which one it holds
    const added = after.find((o) => !before.includes(o));
    flash(added ? "Added " + added + "." : origin + " was already on the list.", "ok");
  } catch (e) {
    fail(e);
  }
  await showOrigins().catch(fail);
});

// --- plan and fairness ----------------------------------------------------------------------

function stat(label, value, sub, share) {
  return el("div", { class: "stat" },
    el("div", { class: "stat-label" }, label),
    el("div", { class: "stat-value" }, value),
    sub ? el("div", { class: "stat-sub" }, sub) : null,
    share === undefined ? null : meter(share));
}

async function loadPlan() {
  const [status, fairness] = await Promise.all([api("GET", "/v1/status"), api("GET", "/usage/fairness")]);
  keysCache = await api("GET", "/admin/keys");
  const b = status.NestingAccountBalance;
  const included = fairness.IncludedMinutes;
  const left = b.RemainingAllowance;
  $("plan-period").textContent = `Current period: ${formatDate(b.StartDate)} to ${formatDate(b.EndDate)}.`;
  const subscription = b.HasActiveSubscription ? badge("Active", "ok") : badge(status.RequiresPayment ? "Payment required" : "Inactive", "bad");
  const trial = status.IsOnTrial ? "On trial" : status.HasHadTrail ? "Trial used" : "No trial";
  $("plan-stats").replaceChildren(
    stat("Nesting minutes left", number(left, 1), `of ${number(included, 0)} included this period`, included > 0 ? left / included : 0),
    stat("Credit", number(b.RemainingCredit, 2), b.PaidUntil ? "Paid until " + formatDate(b.PaidUntil) : "No payment date recorded"),
    stat("Subscription", subscription, trial),
    stat("Shared burst pool", number(fairness.SharedBurstMinutes, 1) + " min",
      number(fairness.SharedBurstDrawnMinutes, 2) + " min drawn · 20 % of the included minutes",
      fairness.SharedBurstMinutes > 0 ? fairness.SharedBurstDrawnMinutes / fairness.SharedBurstMinutes : 0));
  const state = $("fairness-state");
  state.textContent = fairness.FairnessEnabled ? "Admission gate on" : "Informational";
  state.className = "badge " + (fairness.FairnessEnabled ? "badge-ok" : "badge-info");
  $("fairness-note").textContent = fairness.FairnessEnabled
    ? "Each key is admitted within its floor, then from the shared burst pool, then " + (fairness.OverageEnabled ? "as overage." : "refused (overage is off).")
    : "Fair sharing is not enabled on this plan: these figures are for information, nothing is refused by them. Workers still share job slots fairly by weight.";
  const body = $("fairness-table").querySelector("tbody");
  body.replaceChildren(...fairness.Keys.map((r) => {
    // what admission counts against the floor: consumed and reserved, overage aside
    const used = r.EffectiveFloorMinutes > 0 ? r.CountedMinutes / r.EffectiveFloorMinutes : 0;
    const sizing = { Under: "info", Right: "ok", Over: "warn" }[r.Sizing];
    return el("tr", {},
      el("td", {}, keyLabel(r.ApiKeyId), el("span", { class: "sub mono" }, r.ApiKeyId)),
      el("td", { class: "num" }, number(r.Weight, 1)),
      el("td", { class: "num" }, number(r.ConsumedMinutes, 2)),
      el("td", { class: "num" }, number(r.ReservedMinutes, 2)),
      el("td", { class: "num" }, number(r.OverageMinutes, 2)),
      el("td", { class: "num" }, number(r.EffectiveFloorMinutes, 1)),
      el("td", {}, meter(used, (used * 100).toFixed(0) + " % of the floor")),
      el("td", {}, badge(r.Sizing, sizing)));
  }));
}

// --- jobs -------------------------------------------------------------------------------------

const STATUS_KIND = { Completed: "ok", Failed: "bad", Running: "info", Queued: "", Held: "warn" };

async function loadJobs() {
  if (!keysCache.length) keysCache = await api("GET", "/admin/keys");
  const jobs = (await api("GET", "/admin/jobs?Limit=50")).Jobs;
  const seconds = (from, to) => (from && to ? number((new Date(to) - new Date(from)) / 1000, 1) : "");
  const body = $("jobs-table").querySelector("tbody");
  body.replaceChildren(...jobs.map((j) => el("tr", { "data-job": j.RequestId },
    el("td", {}, formatDate(j.CreatedAt)),
    el("td", { class: "mono-wrap" }, j.RequestId),
    el("td", { class: "nowrap" }, j.Kind),
    el("td", {}, keyLabel(j.ApiKeyId), el("span", { class: "sub mono" }, j.ApiKeyId)),
    el("td", {}, badge(j.Status, STATUS_KIND[j.Status]), j.Error ? el("span", { class: "sub" }, j.Error) : null),
    el("td", { class: "num" }, seconds(j.CreatedAt, j.StartedAt)),
    el("td", { class: "num" }, seconds(j.StartedAt, j.CompletedAt)),
    el("td", { class: "actions" }, el("span", { class: "row-actions" },
      j.Kind === "2D nest" ? el("a", { class: "btn btn-small", href: "/dashboard/nests/" + encodeURIComponent(j.RequestId) }, "Live view") : null,
      j.HasRender ? el("button", { type: "button", class: "btn btn-small", onclick: () => showRender(j.RequestId) }, "View render") : null)))));
  $("jobs-empty").hidden = jobs.length > 0;
}

async function showRender(id) {
  try {
    const r = await api("GET", `/v1/nesting/render?RequestId=${encodeURIComponent(id)}`);
    const type = r.RenderFormat === "svg" ? "image/svg+xml" : "image/png";
    $("render-img").src = `data:${type};base64,${r.Base64EncodedRendering}`;
    $("render-title").textContent = "Render of " + id;
    $("render-box").hidden = false;
    $("render-box").scrollIntoView({ block: "nearest" });
  } catch (e) {
    fail(e);
  }
}

$("render-close").addEventListener("click", () => { $("render-box").hidden = true; });
$("jobs-refresh").addEventListener("click", () => loadJobs().catch(fail));

// --- start --------------------------------------------------------------------------------------

(async () => {
  if (!adminKey) return signOut();
  try {
    await signIn(adminKey);
    $("app").hidden = false;
    route();
  } catch (e) {
    signOut(e.status === 401 ? "Your key is no longer valid. Sign in again." : e.message);
  }
})();
