import type { PropsWithChildren } from '@kitajs/html'

type SectionProps = PropsWithChildren<{
  /** The heading's id, for the forms and tables it labels. */
  headingId: string
  heading: string
  /** Open when the user is working in it: a refused form, a change just saved, a value just made. */
  open?: boolean | undefined
}>

/**
 * One section of a long page, closed to its heading until opened (`<details>`, no script): on a phone the
 * settings page is a short list of headings instead of metres of forms. The heading stays a heading inside
 * the summary, so the page's outline and a screen reader's list of headings keep every section.
 */
export function Section({ headingId, heading, open, children }: SectionProps) {
  return (
    <details class="section" open={open === true}>
      <summary>
        <h2 id={headingId} safe>
          {heading}
        </h2>
      </summary>
      <div class="section-body">{children}</div>
    </details>
  )
}

/** A refused form's reason, where the form is: an alert that its fields name (see {@link invalid}). */
export function Problem({ id, message }: { id: string; message: string }) {
  return (
    <div role="alert" class="alert" id={id}>
      <p safe>{message}</p>
    </div>
  )
}

/** A field's accessibility attributes when its form was refused: invalid, described by the alert. */
export function invalid(problem: { message: string } | undefined, alertId: string): Record<string, string> {
  return problem ? { 'aria-invalid': 'true', 'aria-describedby': alertId } : {}
}
