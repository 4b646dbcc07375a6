import { describe, expect, test } from 'bun:test'
import { findCommand, HELP, parseCommandLine } from '../../src/cli/commands.ts'

/** Each command reads its command line with its own flags (src/cli/<command>.ts); nothing is opened here. */
describe('each command takes only its own flags', () => {
  test.each([
    [['clients', 'list', '--client', 'cl_x'], 'unknown option --client'],
    [['keys', 'show', '--limit', '3'], 'unknown option --limit'],
    [['migrate', '--name', 'x'], 'unknown option --name'],
    [['usage', 'cl_x', '--dataset', 'photos'], 'unknown option --dataset'],
    [['webhooks', 'list', 'cl_x', '--email', 'a@b.example'], 'unknown option --email'],
    [['serve', '--json'], 'unknown option --json'],
  ])('a flag of another command is an unknown option: %j', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(message)
  })

  test('a hint names a flag of this command: audit has --limit and --client, not --leaked', () => {
    expect(() => parseCommandLine(['audit', 'list', '--clent', 'cl_x'])).toThrow('unknown option --clent (did you mean "--client"?)')
    expect(() => parseCommandLine(['audit', 'list', '--leaked'])).toThrow(/^unknown option --leaked$/)
  })

  test('the same flag name in two commands is each one\'s own: --client for audit, users and webhooks', () => {
    expect(parseCommandLine(['audit', 'list', '--client', 'cl_x']).flags.client).toBe('cl_x')
    expect(parseCommandLine(['users', 'list', '--client', 'cl_x']).flags.client).toBe('cl_x')
    expect(parseCommandLine(['webhooks', 'dead', '--client', 'cl_x']).flags.client).toBe('cl_x')
  })

  test('an option may stand before the command, read with that command\'s flags', () => {
    expect(findCommand(['--json', 'clients', 'list'])).toMatchObject({ name: 'clients', sub: 'list', help: false })
    expect(parseCommandLine(['--limit', '5', 'audit', 'list', '--client', 'cl_x'])).toMatchObject({ words: ['list'], flags: { limit: '5', client: 'cl_x' } })
    expect(findCommand(['--json'])).toMatchObject({ name: 'serve' })
    expect(findCommand(['clients', 'update', 'cl_x', '--name', 'keys', '-h'])).toMatchObject({ name: 'clients', sub: 'update', help: true })
  })

  test('the help text is the commands\' usage lines, in order', () => {
    const order = ['serve', 'migrate', 'clients create', 'audit show', 'usage CLIENT_ID', 'users create', 'keys show', 'webhooks add', 'trust import', 'estimator eval', 'dev issuer init', 'help, --help', 'version, --version']
    const at = order.map((line) => HELP.indexOf(`\n  ${line}`))
    expect(at.every((index) => index > 0)).toBe(true)
    expect(at).toEqual(at.toSorted((a, b) => a - b))
  })
})
