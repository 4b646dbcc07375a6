/**
 * The ceiling of `bun run bench` for HTTP paths: an Elysia hello world answering JSON on the same Bun,
 * started as a process of its own (`PORT`). Nothing can answer faster through this stack.
 */
import { Elysia } from 'elysia'

new Elysia().get('/', () => ({ hello: 'world' })).listen({ port: Number(process.env.PORT), hostname: '127.0.0.1' })
