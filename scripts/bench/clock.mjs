// Wall-clock milliseconds with a fraction, comparable with the service's event times (Date.parse of `time`).
import { performance } from 'node:perf_hooks'

export const now = () => performance.timeOrigin + performance.now()
