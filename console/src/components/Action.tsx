import { useState } from 'preact/hooks';

export type Outcome = { ok: boolean; text: string } | null;

/**
 * A button's call to the API and what came of it: the text the action returns, or the API's
 * reason for refusing. `after` runs on success (usually a reload of what the action changed).
 */
export function useAction(after?: () => void) {
  const [outcome, setOutcome] = useState<Outcome>(null);
  const act = async (what: () => Promise<string>) => {
    try {
      setOutcome({ ok: true, text: await what() });
      after?.();
    } catch (err) {
      setOutcome({ ok: false, text: err instanceof Error ? err.message : String(err) });
    }
  };
  return { outcome, act, clear: () => setOutcome(null) };
}

/** The outcome, announced: a success politely, a refusal at once. */
export function OutcomeLine({ outcome }: { outcome: Outcome }) {
  if (!outcome) return null;
  return (
    <p role={outcome.ok ? 'status' : 'alert'} class={outcome.ok ? 'ok-text' : 'error'}>
      {outcome.text}
    </p>
  );
}
