import type { PropsWithChildren } from '@kitajs/html'

type DataTableProps = PropsWithChildren<{
  /** Names the caption (`{id}-caption`), which names the table and its scrolling region. */
  id: string
  caption: string
  /** A class of its own beside `audit`, for what only this table needs. */
  kind?: string
}>

/**
 * Every table of the dashboard: a real table (caption, header cells) where it fits; in its own box, which
 * scrolls sideways with a shadow at the edge it scrolls towards, where it is a little too wide; and on a
 * phone a list of cards, each cell named by its `data-label` (ofage.css, no script). Give every `td` of a
 * row the `data-label` of its column.
 */
export function DataTable({ id, caption, kind, children }: DataTableProps) {
  return (
    <div class="table-wrap" role="region" aria-labelledby={`${id}-caption`} tabindex="0">
      <table class={kind ? `audit ${kind}` : 'audit'}>
        <caption id={`${id}-caption`} safe>
          {caption}
        </caption>
        {children}
      </table>
    </div>
  )
}
