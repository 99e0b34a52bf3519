import { PositiveIntParam } from '../common/query-input';

export class UserIdParams {
  @PositiveIntParam('The user id', true)
  id!: number;
}

export class ExposureIdParams {
  @PositiveIntParam('The exposure id', true)
  id!: number;
}
