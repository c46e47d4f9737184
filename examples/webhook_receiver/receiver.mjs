// A Tollgate webhook receiver: checks the Tollgate-Signature header, refuses stale timestamps,
// and handles each event id once (deliveries are at least once). Prints each new event as a line
// of JSON. Usage: TOLLGATE_WEBHOOK_SECRET=... node receiver.mjs [port]   (default 8787)
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const secret = process.env.TOLLGATE_WEBHOOK_SECRET;
if (!secret) throw new Error("set TOLLGATE_WEBHOOK_SECRET");
const toleranceSeconds = 300;
const seen = new Set(); // keep this in your database in production

function verified(header, body) {
  const parts = Object.fromEntries((header ?? "").split(",").map((p) => p.split("=", 2)));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    if (!verified(req.headers["tollgate-signature"], body)) return res.writeHead(401).end();
    const event = JSON.parse(body);
    if (!seen.has(event.id)) seen.add(event.id), console.log(JSON.stringify(event));
    res.writeHead(204).end();
  });
}).listen(Number(process.argv[2] ?? 8787), "127.0.0.1", function () {
  console.error(`webhook receiver listening on http://127.0.0.1:${this.address().port}`);
});
