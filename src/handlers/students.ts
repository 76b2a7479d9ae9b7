// Handlers of the student operations; students are never deleted, so there is no delete here.
import type { ServiceHandlers } from '../contract/api-types.js'
import type { StudentRepository } from '../storage/types.js'
import { etagOf, readAnswer, replaceRecord, withEtag } from './conditional.js'
import type { Idempotency } from './idempotency.js'
import { recordId, studentValues } from './input.js'
import { asIs, type ListContext, type ListParameters, listExport, listPage, lowerCase } from './paging.js'

export const studentList: ListParameters = {
  path: '/api/students',
  plural: 'students',
  readScope: 'students:read',
  // Emails are ASCII (format: email), so lower-casing is the whole of ignoring their case.
  equals: { email: { field: 'email', normalise: lowerCase }, status: { field: 'status', normalise: asIs } },
  ranges: [
    { field: 'enrollment_year', min: 'enrollment_year_min', max: 'enrollment_year_max' },
    { field: 'updated_at', min: 'updated_since', max: 'updated_before', instants: true }
  ]
}

type StudentHandlers = Pick<ServiceHandlers, 'listStudents' | 'exportStudentsCsv' | 'exportStudentsNdjson' | 'createStudent' | 'getStudent' | 'updateStudent'>

export function studentHandlers (students: StudentRepository, lists: ListContext, idempotency: Idempotency): StudentHandlers {
  return {
    async listStudents (request, reply) {
      return listPage(request, reply, lists, students, studentList)
    },

    async exportStudentsCsv (request, reply) {
      return listExport(request, reply, lists, students, studentList, 'csv')
    },

    async exportStudentsNdjson (request, reply) {
      return listExport(request, reply, lists, students, studentList, 'ndjson')
    },

    async createStudent (request, reply) {
      const values = studentValues(request.body)
      return idempotency.create({
        request,
        reply,
        operation: 'createStudent',
        values,
        create: remember => students.create(values, remember),
        headersOf: ({ record, revision }) => ({ location: `/api/students/${record.student_id}`, etag: etagOf(record.student_id, revision) })
      })
    },

    async getStudent (request, reply) {
      const id = recordId(request.params.student_id)
      return readAnswer(request, reply, 'student', id, await students.get(id))
    },

    async updateStudent (request, reply) {
      const id = recordId(request.params.student_id)
      const updated = await replaceRecord(students, { kind: 'student', idField: 'student_id', id, body: request.body, values: studentValues(request.body), ifMatch: request.headers['if-match'] })
      return withEtag(reply, id, updated)
    }
  }
}
