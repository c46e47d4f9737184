// The demo's book_flight form (formType "flight_booking"): the generic card with the trip
// stated above the fields. Also an example of a tool's own renderer.
import { GenericFormCard } from "./FormCard";
import { registerFormRenderer, type FormRendererProps } from "./registry";

function FlightBookingCard(props: FormRendererProps) {
  const ctx = typeof props.spec.context === "object" ? props.spec.context : undefined;
  const route = ctx && typeof ctx.from === "string" && typeof ctx.to === "string" ? `${ctx.from} → ${ctx.to}` : null;
  return <GenericFormCard {...props} summary={route ? <p className="trip" data-testid="flight-route">✈ {route}</p> : null} />;
}

registerFormRenderer("flight_booking", FlightBookingCard);
