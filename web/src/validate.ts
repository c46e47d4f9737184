// Checks edited tool arguments: JSON syntax first, then the tool's JSON Schema (ajv).
import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const compiled = new WeakMap<object, ValidateFunction | Error>();

export interface ArgsCheck {
  args?: Record<string, unknown>;
  errors: string[];
}

function compile(schema: Record<string, unknown>): ValidateFunction | Error {
  let fn = compiled.get(schema);
  if (!fn) {
    try {
      fn = ajv.compile(schema);
    } catch (e) {
      fn = e instanceof Error ? e : new Error(String(e));
    }
    compiled.set(schema, fn);
  }
  return fn;
}

function describe(e: ErrorObject, whole = "arguments"): string {
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : whole;
  if (e.keyword === "required") return `${where === whole ? "" : where + "."}${String(e.params.missingProperty)} is required`;
  if (e.keyword === "additionalProperties") return `${String(e.params.additionalProperty)} is not an allowed field`;
  return `${where} ${e.message ?? "is invalid"}`;
}

export function checkArgs(text: string, schema?: Record<string, unknown>): ArgsCheck {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { errors: [`Not valid JSON: ${e instanceof Error ? e.message : String(e)}`] };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { errors: ["The arguments must be a JSON object ({ ... })"] };
  }
  const args = parsed as Record<string, unknown>;
  if (!schema) return { args, errors: [] };
  const fn = compile(schema);
  if (fn instanceof Error) return { args, errors: [] }; // an unusable schema must not block the reviewer
  if (fn(args)) return { args, errors: [] };
  return { errors: (fn.errors ?? []).map((e) => describe(e)) };
}

/**
 * Checks a form's values against the response schema its interrupt declares: one sentence per
 * violation, naming the field ("passengers must be <= 9"). No schema, or an unusable one: none.
 */
export function checkValues(values: Record<string, unknown>, schema?: Record<string, unknown>): string[] {
  if (!schema) return [];
  const fn = compile(schema);
  if (fn instanceof Error || fn(values)) return [];
  return (fn.errors ?? []).map((e) => describe(e, "the answer"));
}
