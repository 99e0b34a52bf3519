import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ProjectIdParam } from '../common/query-input';
import { Int, ListOf, Source, Text, TextOrNull } from '../common/response-properties';
import { ContactRecord, PersonRecord } from '../contacts/contacts.dto';
import { GDPR_ROLES } from './contract-partner-role.entity';

export class ContractsQuery {
  @ProjectIdParam()
  project_id?: number;
}

class ContractPartnerRecord {
  @Text() partner!: string;
  @ApiProperty({ type: String, enum: [...GDPR_ROLES], isArray: true }) partner_roles!: string[];
  @TextOrNull() comments!: string | null;
  @ListOf(ContactRecord) contacts!: ContactRecord[];
}

@ApiSchema({ description: 'A contract' })
export class ContractRecord {
  @Int() id!: number;
  @TextOrNull() name!: string | null;
  @TextOrNull() comments!: string | null;
  @Int() project_id!: number;
  @ListOf(PersonRecord) local_custodians!: PersonRecord[];
  @ListOf(ContractPartnerRecord) partners!: ContractPartnerRecord[];
  @Source() source!: string;
}

export class ContractsPage {
  @ListOf(ContractRecord) items!: ContractRecord[];
}
