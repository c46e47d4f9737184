// Named facts as a definition list: a form's context, the values of a resolved card.
export function FactList({ facts }: { facts: Record<string, unknown> }) {
  return (
    <dl className="context">
      {Object.entries(facts).map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
        </div>
      ))}
    </dl>
  );
}
