[Models]
  [model]
    type = ElasticStrainRate
    elastic_strain = ee
    elastic_strain_rate = ee_rate
  []
[]
