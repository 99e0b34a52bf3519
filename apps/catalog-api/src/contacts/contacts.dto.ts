import { ApiSchema } from '@nestjs/swagger';
import { ListOf, OneOf, Text, TextOrNull, Texts } from '../common/response-properties';
import { CONTACT_TYPES } from './contact.entity';

@ApiSchema({ description: 'A person in short form' })
export class PersonRecord {
  @Text() first_name!: string;
  @Text() last_name!: string;
  @TextOrNull() email!: string | null;
  @OneOf(CONTACT_TYPES) role!: string;
  @Texts({ description: 'Partner names' }) affiliations!: string[];
}

class ContactPartner {
  @TextOrNull() acronym!: string | null;
  @Text() name!: string;
}

@ApiSchema({ description: 'A contact in full form' })
export class ContactRecord {
  @Text() pk!: string;
  @TextOrNull() email!: string | null;
  @TextOrNull() oidc_id!: string | null;
  @Text() first_name!: string;
  @Text() last_name!: string;
  @TextOrNull() address!: string | null;
  @TextOrNull() phone!: string | null;
  @OneOf(CONTACT_TYPES) type!: string;
  @ListOf(ContactPartner) partners!: ContactPartner[];
}
