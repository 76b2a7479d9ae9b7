// sendProblem, the one way problems leave: whatever a thrower hands it, at most the contract's 100 errors go out; problemOf, storage's refusals as problems.
import Fastify from 'fastify'
import t from 'tap'
import { IdempotencyKeyBusyError, IdempotencyKeyTakenError, RevisionNotCurrentError, ValueTakenError } from '../src/domain/outcomes.js'
import { problemOf } from '../src/http/errors.js'
import { sendProblem } from '../src/http/problems.js'

t.test('a problem never carries more than 100 errors (the contract\'s maxItems); its detail says how many there were', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.decorate('redact', (text: string) => text)
  const errors = (count: number) => Array.from({ length: count }, (_, i) => ({ detail: `is wrong (${i})`, parameter: `p${i}` }))
  app.get('/many', async (_request, reply) => sendProblem(reply, { type: 'about:blank', status: 400, detail: 'Many problems', errors: errors(500_000) }))
  app.get('/untold', async (_request, reply) => sendProblem(reply, { type: 'about:blank', status: 400, errors: errors(101) }))
  app.get('/hundred', async (_request, reply) => sendProblem(reply, { type: 'about:blank', status: 400, detail: 'A hundred problems', errors: errors(100) }))
  const many = (await app.inject({ url: '/many' })).json()
  t.equal(many.errors.length, 100)
  t.same(many.errors.at(-1), { detail: 'is wrong (99)', parameter: 'p99' }, 'the first ones')
  t.equal(many.detail, 'Many problems (errors lists the first 100 of 500000)')
  t.equal((await app.inject({ url: '/untold' })).json().detail, 'Bad Request (errors lists the first 100 of 101)')
  const hundred = (await app.inject({ url: '/hundred' })).json()
  t.equal(hundred.errors.length, 100)
  t.equal(hundred.detail, 'A hundred problems', 'a list within the cap goes out as it is')
})

t.test('storage\'s refusals are said as their problems in one place; any other error is not one', async t => {
  t.match(problemOf(new ValueTakenError('book', 'isbn')), { statusCode: 409, type: '/problems/already-exists', message: 'Another book already has this isbn' })
  t.match(problemOf(RevisionNotCurrentError.of('book', [1], 2)), { statusCode: 412, type: '/problems/precondition-failed', message: 'The book has changed since the ETag in If-Match was issued' })
  t.match(problemOf(RevisionNotCurrentError.of('student', [7], 2)), { statusCode: 412, message: /^The ETag in If-Match does not match the student's current one/ })
  t.match(problemOf(new IdempotencyKeyBusyError()), { statusCode: 409, type: '/problems/idempotency-key-in-use' })
  t.equal(problemOf(new IdempotencyKeyTakenError()), undefined, 'a key taken is replayed by the handler, never answered as such')
  t.equal(problemOf(new Error('disk I/O error')), undefined)
})
