// Form renderers by `formType`: a tool whose interrupt needs more than the generic form
// registers its own; any other formType gets the generic form card.
import type { ComponentType } from "react";
import type { CardSpec } from "./cardForm";

export interface FormRendererProps {
  spec: CardSpec;
  busy: boolean;
  /** Sends `{approved, values}`. */
  onAnswer: (approved: boolean, values: Record<string, unknown>) => void;
}

export type FormRenderer = ComponentType<FormRendererProps>;

const renderers = new Map<string, FormRenderer>();

/** Registers the renderer of one formType (a later registration replaces an earlier one). */
export function registerFormRenderer(formType: string, renderer: FormRenderer): void {
  renderers.set(formType, renderer);
}

/** The renderer registered for `formType`, else `fallback`. */
export function formRendererFor(formType: string, fallback: FormRenderer): FormRenderer {
  return renderers.get(formType) ?? fallback;
}
