// What the hub scripts share: a transcript line per step, waiting for events, and calls
// whose failure is part of the transcript rather than the end of the script.

// one JSON object per line: tests/*.rs read them back
export const say = (step, data) => console.log(JSON.stringify({ step, ...data }));

// a script gives up after this long, whatever it waits for
const deadline = Date.now() + 120_000;

// waits until pred() holds (events arrive on their own)
export async function until(what, pred) {
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function attempt(step, call) {
  try {
    const result = await call();
    say(step, { ok: true, result });
  } catch (e) {
    say(step, { ok: false, error: String(e.message || e) });
  }
}
