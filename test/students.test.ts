// The student operations through the real app: every outcome the contract declares.
import t from 'tap'
import { ada, build } from './helper.js'

const unknownId = '0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d'

t.test('POST /api/students creates a student, active by default', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'POST', url: '/api/students', payload: { name: 'Ada Lovelace', email: 'ada@example.org' } })
  t.equal(res.statusCode, 201)
  const student = res.json()
  t.equal(res.headers.location, `/api/students/${student.student_id}`)
  t.match(student, { name: 'Ada Lovelace', email: 'ada@example.org', enrollment_year: null, status: 'active' })
  t.same((await request({ method: 'GET', url: `/api/students/${student.student_id}` })).json(), student)
})

t.test('POST /api/students answers 409 for an email taken in any letter case', async t => {
  const { request } = await build(t)
  t.equal((await request({ method: 'POST', url: '/api/students', payload: ada })).statusCode, 201)
  const res = await request({ method: 'POST', url: '/api/students', payload: { ...ada, email: 'ADA@Example.ORG' } })
  t.equal(res.statusCode, 409)
  t.match(res.json(), { status: 409, detail: 'Another student already has this email' })
  t.equal((await request({ method: 'GET', url: '/api/students' })).json().items.length, 1)
})

t.test('POST /api/students rejects a bad email, status and enrollment year', async t => {
  const { request } = await build(t)
  const res = await request({
    method: 'POST',
    url: '/api/students',
    payload: { name: 'A', email: 'not-an-email', status: 'expelled', enrollment_year: 2025.5 }
  })
  t.equal(res.statusCode, 400)
  const errors = res.json().errors
  t.same(new Set(errors.map((e: { pointer: string }) => e.pointer)), new Set(['#/email', '#/status', '#/enrollment_year']))
  t.ok(errors.some((e: { detail: string }) => e.detail === 'must be one of: active, graduated, withdrawn'))
  const beyond = await request({ method: 'POST', url: '/api/students', payload: { ...ada, enrollment_year: 10_000 } })
  t.same(beyond.json().errors, [{ detail: 'must be 9999 or less', pointer: '#/enrollment_year' }])
  // The contract's fixed bound, not the calendar: an admitted student may enrol in a future year.
  const admitted = await request({ method: 'POST', url: '/api/students', payload: { ...ada, enrollment_year: new Date().getUTCFullYear() + 2 } })
  t.equal(admitted.statusCode, 201)
})

t.test('GET /api/students/{student_id} answers 404 for an unknown id', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'GET', url: `/api/students/${unknownId}` })
  t.equal(res.statusCode, 404)
  t.equal(res.json().detail, `No student has the id ${unknownId}`)
})

t.test('PUT /api/students/{student_id} retires a student and resets omitted fields', async t => {
  const { request } = await build(t)
  const created = (await request({ method: 'POST', url: '/api/students', payload: ada })).json()
  const graduated = await request({ method: 'PUT', url: `/api/students/${created.student_id}`, payload: { ...ada, status: 'graduated' } })
  t.equal(graduated.statusCode, 200)
  t.match(graduated.json(), { status: 'graduated', enrollment_year: 2025, created_at: created.created_at })
  const reset = await request({ method: 'PUT', url: `/api/students/${created.student_id}`, payload: { name: 'Ada King', email: 'ada@example.org' } })
  t.match(reset.json(), { name: 'Ada King', status: 'active', enrollment_year: null })
})

t.test('PUT /api/students/{student_id} answers 404, 409 and 400 without changing anything', async t => {
  const { request } = await build(t)
  t.equal((await request({ method: 'PUT', url: `/api/students/${unknownId}`, payload: ada })).statusCode, 404)
  const first = (await request({ method: 'POST', url: '/api/students', payload: ada })).json()
  const second = (await request({ method: 'POST', url: '/api/students', payload: { ...ada, email: 'grace@example.org' } })).json()
  const taken = await request({ method: 'PUT', url: `/api/students/${second.student_id}`, payload: { ...ada, email: 'Ada@example.org' } })
  t.equal(taken.statusCode, 409)
  const bad = await request({ method: 'PUT', url: `/api/students/${first.student_id}`, payload: { ...ada, student_id: unknownId } })
  t.equal(bad.statusCode, 400)
  t.same((await request({ method: 'GET', url: `/api/students/${first.student_id}` })).json(), first)
  t.same((await request({ method: 'GET', url: `/api/students/${second.student_id}` })).json(), second)
})

t.test('DELETE /api/students/{student_id} is not allowed: students are never deleted', async t => {
  const { request } = await build(t)
  const created = (await request({ method: 'POST', url: '/api/students', payload: ada })).json()
  const res = await request({ method: 'DELETE', url: `/api/students/${created.student_id}` })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD, PUT')
  t.equal((await request({ method: 'GET', url: `/api/students/${created.student_id}` })).statusCode, 200)
})

t.test('PUT takes back the student as GET returned them, with a new status (the graduation of docs/using-the-api.md)', async t => {
  const { request } = await build(t)
  const student = (await request({ method: 'POST', url: '/api/students', payload: ada })).json()
  const url = `/api/students/${student.student_id}`
  const read = await request({ method: 'GET', url })
  const graduated = await request({ method: 'PUT', url, headers: { 'if-match': read.headers.etag as string }, payload: { ...read.json() as object, status: 'graduated' } })
  t.equal(graduated.statusCode, 200)
  t.match(graduated.json(), { status: 'graduated', enrollment_year: 2025, created_at: student.created_at }, 'nothing else changed')
  // Timestamps other than the student's, as a body read before another change holds: ignored, never stored.
  const before = new Date().toISOString()
  const moved = await request({ method: 'PUT', url, payload: { ...read.json() as object, status: 'withdrawn', created_at: '2001-01-01T00:00:00.000Z', updated_at: '2001-01-01T01:00:00+01:00' } })
  t.equal(moved.statusCode, 200, 'without If-Match the old timestamps refuse nothing')
  t.match(moved.json(), { status: 'withdrawn', created_at: student.created_at }, 'the student keeps their created_at')
  t.ok(moved.json().updated_at >= before && moved.json().updated_at <= new Date().toISOString(), 'updated_at is the server\'s')
})
