// Deliveries verify with the reference `standardwebhooks` library (a dev dependency), not only with our own HMAC check.
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { newSecret, signatures } from '../src/webhooks/signature.js'

t.test('standardwebhooks verifies a signature made with each secret, and refuses a changed body', async t => {
  const [current, previous] = [newSecret(), newSecret()]
  const id = '0000000000000042'
  const timestamp = Math.floor(Date.now() / 1000)
  const body = '{"id":"0000000000000042","type":"book.created"}'
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures([current, previous], id, timestamp, body) }
  t.same(new Webhook(current).verify(body, headers), JSON.parse(body))
  t.same(new Webhook(previous).verify(body, headers), JSON.parse(body), 'either secret verifies during a rotation')
  t.throws(() => new Webhook(current).verify(body.replace('42', '43'), headers))
  t.throws(() => new Webhook(newSecret()).verify(body, headers))
})
