import type { PGlite, Transaction } from '@electric-sql/pglite'

/** Called with the text of every statement sent to the database, `BEGIN` and `COMMIT` included. */
export type OnStatement = (text: string) => void

/**
 * The statements a piece of work sends, in order: what the hosted page's flow is measured by (each one a
 * round trip, test/verification/statements.test.ts and `bun run bench`). Nothing else may use the database
 * while it is measured, or its statements are counted too.
 */
export function createStatementLog() {
  let texts: string[] = []
  return {
    onStatement: ((text) => void texts.push(text)) as OnStatement,
    /** Runs `work` and returns its result with the statements sent meanwhile. */
    async measure<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
      texts = []
      const result = await work()
      const statements = texts
      texts = []
      return { result, statements }
    },
  }
}

/**
 * PGlite with every statement reported: its own `query` and `exec`, and those of its transactions, whose
 * `BEGIN` and `COMMIT` (or `ROLLBACK`) it sends itself. postgres.js reports through its `debug` option.
 */
export function reportingPglite(client: PGlite, onStatement: OnStatement): PGlite {
  const wrap = <C extends PGlite | Transaction>(target: C): C =>
    new Proxy(target, {
      get(object, property, receiver) {
        const value: unknown = Reflect.get(object, property, receiver)
        if (typeof value !== 'function') return value
        if (property === 'query' || property === 'exec') {
          return (text: string, ...rest: unknown[]) => (onStatement(text), value.call(object, text, ...rest))
        }
        if (property === 'transaction') {
          return async (callback: (tx: Transaction) => Promise<unknown>) => {
            onStatement('BEGIN')
            try {
              const result = await value.call(object, (tx: Transaction) => callback(wrap(tx)))
              onStatement('COMMIT')
              return result
            } catch (cause) {
              onStatement('ROLLBACK')
              throw cause
            }
          }
        }
        // PGlite keeps its state in private fields, which only the object itself may reach.
        return value.bind(object)
      },
    })
  return wrap(client)
}
