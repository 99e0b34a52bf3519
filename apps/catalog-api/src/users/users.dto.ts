import { Int, ListOf, Text } from '../common/response-properties';

class UserOption {
  @Int({ example: 5 }) id!: number;
  @Text({ description: 'First and last name, else the username', example: 'First Last' })
  text!: string;
}

export class UsersPage {
  @ListOf(UserOption) results!: UserOption[];
}
