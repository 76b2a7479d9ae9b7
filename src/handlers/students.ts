// Handlers of the student operations; students are never deleted, so there is no delete here.
import type { CursorCodec } from '../cursor.js'
import type { ServiceHandlers } from '../api-types.js'
import { NotFoundError } from '../errors.js'
import type { StudentRepository } from '../repositories/types.js'
import { studentValues } from './input.js'
import { listPage } from './paging.js'

type StudentHandlers = Pick<ServiceHandlers, 'listStudents' | 'createStudent' | 'getStudent' | 'updateStudent'>

export function studentHandlers (students: StudentRepository, cursors: CursorCodec): StudentHandlers {
  return {
    async listStudents (request, reply) {
      return listPage(request, reply, cursors, students, '/api/students')
    },

    async createStudent (request, reply) {
      const student = await students.create(studentValues(request.body))
      reply.code(201).header('location', `/api/students/${student.student_id}`)
      return student
    },

    async getStudent (request) {
      const student = await students.get(request.params.student_id)
      if (student === null) throw new NotFoundError('student', request.params.student_id)
      return student
    },

    async updateStudent (request) {
      const student = await students.replace(request.params.student_id, studentValues(request.body))
      if (student === null) throw new NotFoundError('student', request.params.student_id)
      return student
    }
  }
}
