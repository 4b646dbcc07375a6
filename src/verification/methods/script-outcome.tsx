/**
 * Where a method's page script reports progress (`data-status`) and a refusal with the way back
 * (`data-outcome`, filled by its `show()`): the same markup for every script-driven method.
 */
export function ScriptOutcome() {
  return (
    <>
      <p class="status" role="status" aria-live="polite" data-status></p>
      <div class="alert" role="alert" data-outcome hidden>
        <p data-message></p>
        <p>
          <a data-back href="#"></a>
        </p>
      </div>
    </>
  )
}
