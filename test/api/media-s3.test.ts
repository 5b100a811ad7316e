import { mediaFlowSuite } from '../helpers/media-flow'
import { startS3Server } from '../helpers/s3'

mediaFlowSuite('s3', startS3Server)
