import { BooleanField, PositiveIntParam, TextField, TextListField } from '@app/platform';

const GROUP = {
  nonEmpty: true,
  max: 150,
  pattern: /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
  patternMessage: 'must be letters, digits, dots, dashes or underscores',
};
const GROUPS = {
  max: 50,
  description: "Replaces the user's groups; `data-steward` and `auditor` see everything",
};
const OIDC_ID = {
  nullable: true,
  nonEmpty: true,
  max: 64,
  description: 'Identity-provider subject',
};
const AFFILIATION = {
  nullable: true,
  nonEmpty: true,
  max: 255,
  description: 'A partner (name, acronym or accession), exported as the affiliation',
};

export class UserIdParams {
  @PositiveIntParam('The user id', true)
  id!: number;
}

export class CreateUserBody {
  @TextField({
    required: true,
    nonEmpty: true,
    max: 150,
    pattern: /^[A-Za-z0-9._@+-]+$/,
    patternMessage: 'must be letters, digits and . _ @ + -',
  })
  username!: string;

  @TextField({ required: true, max: 150 })
  first_name!: string;

  @TextField({ required: true, max: 150 })
  last_name!: string;

  @TextField({
    required: true,
    max: 254,
    format: 'email',
    pattern: /^[^\s@]+@[^\s@]+$/,
    patternMessage: 'must be an email address',
  })
  email!: string;

  @TextField(OIDC_ID)
  oidc_id?: string | null;

  @TextListField(GROUP, GROUPS)
  groups?: string[];

  @TextField(AFFILIATION)
  affiliation?: string | null;
}

export class UpdateUserBody {
  @BooleanField()
  is_active?: boolean;

  @TextListField(GROUP, GROUPS)
  groups?: string[];

  @TextField(OIDC_ID)
  oidc_id?: string | null;

  @TextField(AFFILIATION)
  affiliation?: string | null;
}
