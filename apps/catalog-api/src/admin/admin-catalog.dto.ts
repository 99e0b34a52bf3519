import { ApiSchema } from '@nestjs/swagger';
import {
  BooleanField,
  IdOrNameField,
  IntegerField,
  OneOfField,
  PathTextParam,
  PositiveIntParam,
  TextField,
} from '@app/platform';
import {
  GRANT_OBJECT_TYPES,
  GRANTABLE_PERMISSIONS,
  type GrantablePermission,
  type GrantObjectType,
} from '../visibility/permission-grant.entity';

export class ExposureIdParams {
  @PositiveIntParam('The exposure id', true)
  id!: number;
}

export class CreateEndpointBody {
  @TextField({ required: true, nonEmpty: true, max: 150 })
  name!: string;

  @TextField({
    required: true,
    nonEmpty: true,
    max: 2000,
    pattern: /^https?:\/\/\S*\$\{entity_id\}\S*$/,
    patternMessage: 'must be an http(s) URL containing ${entity_id}',
    description: 'The endpoint URL of a record, with `${entity_id}` where its id goes',
  })
  url_pattern!: string;
}

export class CreateExposureBody {
  @TextField({
    required: true,
    nonEmpty: true,
    max: 255,
    description: 'Dataset accession, else exact name',
  })
  dataset!: string;

  @TextField({ required: true, nonEmpty: true, max: 150, description: 'Endpoint name' })
  endpoint!: string;

  @IntegerField({ required: true })
  form_id!: number;

  @TextField({ nullable: true, max: 255 })
  form_name?: string | null;

  @BooleanField({ description: 'Default false' })
  request_pdf_enabled?: boolean;
}

export class WithdrawExposureBody {
  @TextField({ required: true, nonEmpty: true, max: 2000 })
  reason!: string;
}

@ApiSchema({ description: 'Exactly one of `user` and `group`' })
export class GrantBody {
  @TextField({ nonEmpty: true, max: 150, description: 'Username (or give `group`)' })
  user?: string;

  @TextField({ nonEmpty: true, max: 150, description: 'Group name (or give `user`)' })
  group?: string;

  @OneOfField(GRANTABLE_PERMISSIONS, { required: true })
  permission!: GrantablePermission;

  @OneOfField(GRANT_OBJECT_TYPES, { required: true })
  object_type!: GrantObjectType;

  @IdOrNameField({
    required: true,
    description: 'Accession, name (acronym for projects) or id; contracts by id',
  })
  object!: number | string;
}

export class DatasetRefParams {
  @PathTextParam("The dataset's accession, else its exact name", 255)
  dataset!: string;
}

export class VpDiscoverableBody {
  @BooleanField({
    required: true,
    description:
      'Tag the dataset `ejp:vpConnection ejp:VPDiscoverable` in the FAIR Data Point (for the ' +
      'EJP RD Virtual Platform); false removes its own tag (FDP_VP_DISCOVERABLE still tags all)',
  })
  discoverable!: boolean;
}
