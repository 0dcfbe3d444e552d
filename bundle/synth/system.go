package synth

import "strings"

// systems are Transport Canada's system types, English and French, as its
// database writes them.
var systems = []struct{ en, fr string }{
	{"Airbag", "Coussin gonflable"},
	{"Brakes", "Freins"},
	{"Fuel Supply", "Alimentation en carburant"},
	{"Steering", "Direction"},
	{"Seats And Restraints", "Sièges et dispositifs de retenue"},
	{"Electrical", "Circuit électrique"},
	{"Powertrain", "Groupe motopropulseur"},
	{"Suspension", "Suspension"},
	{"Lights And Instruments", "Feux et instruments"},
	{"Tires", "Pneus"},
	{"Structure", "Structure"},
	{"Engine", "Moteur"},
	{"Wheels", "Roues"},
	{"Visual System", "Système visuel"},
	{"Accessories", "Accessoires"},
	{"Label", "Étiquette"},
	{"Heater And Defroster", "Chaufferette et dégivreur"},
	{"Other", "Autres"},
}

const (
	sysAirbag = iota
	sysBrakes
	sysFuel
	sysSteering
	sysSeats
	sysElectrical
	sysPowertrain
	sysSuspension
	sysLights
	sysTires
	sysStructure
	sysEngine
	sysWheels
	sysVisual
	sysAccessories
	sysLabel
	sysHeater
	sysOther
)

// defect is a kind of vehicle recall: its system, the categories it can
// strike, and its text. The comment is the recall's COMMENT_ETXT/_FTXT; the
// short text makes the dump's title.
type defect struct {
	sys              int
	cats             string // vehicle category codes
	compliance       bool   // a compliance recall rather than a safety one
	since            int    // first recall year the defect fits (0: any)
	shortEN, shortFR string
	commentEN        string
	commentFR        string
}

// The comments follow Transport Canada's wording: what can happen, what it
// risks, and the correction.
var defects = []defect{
	{sysAirbag, "CUTVHKBD", false, 0, "Driver airbag inflator may rupture", "Le gonfleur du coussin gonflable du conducteur pourrait se rompre",
		"On certain vehicles, the driver's frontal airbag inflator could rupture when the airbag deploys. This could cause metal fragments to strike and seriously injure vehicle occupants. Correction: Dealers will replace the driver's airbag inflator.",
		"Sur certains véhicules, le gonfleur du coussin gonflable frontal du conducteur pourrait se rompre lors du déploiement du coussin. Des fragments de métal pourraient alors être projetés et blesser gravement les occupants. Correction : Les concessionnaires remplaceront le gonfleur du coussin gonflable du conducteur."},
	{sysAirbag, "CUTV", false, 2000, "Passenger airbag may not deploy", "Le coussin gonflable du passager pourrait ne pas se déployer",
		"On certain vehicles, the occupant classification system could incorrectly turn off the front passenger airbag. If the airbag does not deploy in a crash where it is needed, this could increase the risk of injury. Correction: Dealers will recalibrate the occupant classification system.",
		"Sur certains véhicules, le système de classification de l'occupant pourrait désactiver par erreur le coussin gonflable du passager avant. Si le coussin ne se déploie pas lors d'une collision où il est nécessaire, le risque de blessures pourrait augmenter. Correction : Les concessionnaires recalibreront le système de classification de l'occupant."},
	{sysAirbag, "CUTV", false, 2000, "Side curtain airbag may deploy unexpectedly", "Le rideau gonflable latéral pourrait se déployer de façon inattendue",
		"On certain vehicles, a wiring harness under the headliner could chafe and short circuit. This could cause the side curtain airbag to deploy unexpectedly, increasing the risk of injury or of a crash. Correction: Dealers will inspect the wiring harness and repair it as needed.",
		"Sur certains véhicules, un faisceau de câblage sous le garnissage de pavillon pourrait s'user par frottement et causer un court-circuit. Le rideau gonflable latéral pourrait alors se déployer de façon inattendue, ce qui augmenterait le risque de blessures ou de collision. Correction : Les concessionnaires inspecteront le faisceau de câblage et le répareront au besoin."},
	{sysBrakes, "CUTVHKM3YBDRAXN", false, 0, "Brake fluid may leak", "Du liquide de frein pourrait fuir",
		"On certain vehicles, the brake master cylinder could leak brake fluid into the brake booster. This could reduce braking performance and increase stopping distance, increasing the risk of a crash. Correction: Dealers will replace the brake master cylinder.",
		"Sur certains véhicules, le maître-cylindre de frein pourrait laisser fuir du liquide de frein dans le servofrein. Cela pourrait réduire l'efficacité du freinage et allonger la distance d'arrêt, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront le maître-cylindre de frein."},
	{sysBrakes, "CUTVHKM3", false, 0, "Brake caliper bolts may loosen", "Les boulons des étriers de frein pourraient se desserrer",
		"On certain vehicles, the rear brake caliper bolts may not have been tightened properly. A loose caliper could reduce braking performance and increase the risk of a crash. Correction: Dealers will tighten the caliper bolts to specification.",
		"Sur certains véhicules, les boulons des étriers de frein arrière pourraient ne pas avoir été serrés correctement. Un étrier desserré pourrait réduire l'efficacité du freinage et augmenter le risque de collision. Correction : Les concessionnaires serreront les boulons des étriers au couple prescrit."},
	{sysBrakes, "CUTV", false, 2008, "Electric parking brake may not hold", "Le frein de stationnement électrique pourrait ne pas retenir le véhicule",
		"On certain vehicles, the electric parking brake may not fully engage. If the vehicle is parked on an incline, it could roll away, increasing the risk of injury or of a crash. Correction: Dealers will update the parking brake control software.",
		"Sur certains véhicules, le frein de stationnement électrique pourrait ne pas s'engager complètement. Si le véhicule est garé dans une pente, il pourrait se déplacer, ce qui augmenterait le risque de blessures ou de collision. Correction : Les concessionnaires mettront à jour le logiciel de commande du frein de stationnement."},
	{sysBrakes, "HKBDL", false, 0, "Spring brake chamber may fail", "La chambre de frein à ressort pourrait céder",
		"On certain vehicles, a spring brake chamber could crack and separate. This could cause a loss of parking brake function or reduce braking, increasing the risk of a crash. Correction: Dealers will inspect the brake chambers and replace them as needed.",
		"Sur certains véhicules, une chambre de frein à ressort pourrait se fissurer et se séparer. Cela pourrait entraîner la perte du frein de stationnement ou réduire le freinage, ce qui augmenterait le risque de collision. Correction : Les concessionnaires inspecteront les chambres de frein et les remplaceront au besoin."},
	{sysBrakes, "LP", false, 0, "Electric brakes may stop working", "Les freins électriques pourraient cesser de fonctionner",
		"On certain trailers, the electric brake wiring could be pinched against the axle and short circuit. This could cause the trailer brakes to stop working, increasing the risk of a crash. Correction: Dealers will reroute and secure the brake wiring.",
		"Sur certaines remorques, le câblage des freins électriques pourrait être coincé contre l'essieu et causer un court-circuit. Les freins de la remorque pourraient alors cesser de fonctionner, ce qui augmenterait le risque de collision. Correction : Les concessionnaires modifieront le trajet du câblage des freins et le fixeront."},
	{sysBrakes, "E", false, 0, "Replacement brake hoses may leak", "Des flexibles de frein de rechange pourraient fuir",
		"Certain replacement brake hoses could leak brake fluid at the fitting. A leak could reduce braking performance, increasing the risk of a crash. Correction: The company will replace the brake hoses.",
		"Certains flexibles de frein de rechange pourraient laisser fuir du liquide de frein au raccord. Une fuite pourrait réduire l'efficacité du freinage, ce qui augmenterait le risque de collision. Correction : L'entreprise remplacera les flexibles de frein."},
	{sysFuel, "CUTVHKM3YRAXN", false, 0, "Fuel leak and risk of fire", "Fuite de carburant et risque d'incendie",
		"On certain vehicles, a fuel line could crack and leak. A fuel leak in the presence of an ignition source could result in a fire, increasing the risk of injury or damage to property. Correction: Dealers will replace the fuel line.",
		"Sur certains véhicules, une conduite de carburant pourrait se fissurer et fuir. Une fuite de carburant en présence d'une source d'inflammation pourrait provoquer un incendie, ce qui augmenterait le risque de blessures ou de dommages matériels. Correction : Les concessionnaires remplaceront la conduite de carburant."},
	{sysFuel, "CUTVHK", false, 0, "Fuel pump may fail", "La pompe à carburant pourrait tomber en panne",
		"On certain vehicles, the low-pressure fuel pump could fail. This could cause the engine to stall while driving and not restart, increasing the risk of a crash. Correction: Dealers will replace the fuel pump.",
		"Sur certains véhicules, la pompe à carburant basse pression pourrait tomber en panne. Le moteur pourrait alors caler pendant la conduite et ne pas redémarrer, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront la pompe à carburant."},
	{sysFuel, "R", false, 0, "Propane line may leak", "La conduite de propane pourrait fuir",
		"On certain motor homes, a propane supply line could rub against the frame and leak. A propane leak in the presence of an ignition source could result in a fire. Correction: Dealers will inspect the propane line, replace it as needed and add a protective sleeve.",
		"Sur certaines autocaravanes, une conduite d'alimentation en propane pourrait frotter contre le châssis et fuir. Une fuite de propane en présence d'une source d'inflammation pourrait provoquer un incendie. Correction : Les concessionnaires inspecteront la conduite de propane, la remplaceront au besoin et ajouteront une gaine protectrice."},
	{sysSteering, "CUTVHKAX", false, 0, "Steering column bolt may loosen", "Un boulon de la colonne de direction pourrait se desserrer",
		"On certain vehicles, the bolt that connects the steering column to the steering gear may not have been tightened properly. The bolt could loosen and separate, causing a loss of steering control and increasing the risk of a crash. Correction: Dealers will inspect the bolt and tighten or replace it.",
		"Sur certains véhicules, le boulon qui relie la colonne de direction au boîtier de direction pourrait ne pas avoir été serré correctement. Le boulon pourrait se desserrer et se détacher, ce qui entraînerait une perte de contrôle de la direction et augmenterait le risque de collision. Correction : Les concessionnaires inspecteront le boulon et le serreront ou le remplaceront."},
	{sysSteering, "CUTV", false, 2005, "Loss of power steering assist", "Perte de l'assistance de direction",
		"On certain vehicles, the electric power steering could lose assist without warning. Steering would then require much more effort, especially at low speeds, increasing the risk of a crash. Correction: Dealers will update the power steering control module software.",
		"Sur certains véhicules, la direction assistée électrique pourrait perdre son assistance sans avertissement. La direction exigerait alors beaucoup plus d'effort, surtout à basse vitesse, ce qui augmenterait le risque de collision. Correction : Les concessionnaires mettront à jour le logiciel du module de commande de la direction assistée."},
	{sysSteering, "M3", false, 0, "Handlebar may crack", "Le guidon pourrait se fissurer",
		"On certain motorcycles, the handlebar could crack near the clamp. A broken handlebar could cause a loss of control, increasing the risk of a crash. Correction: Dealers will replace the handlebar.",
		"Sur certaines motocyclettes, le guidon pourrait se fissurer près de la bride. Un guidon brisé pourrait entraîner une perte de contrôle, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront le guidon."},
	{sysSeats, "CUTVHKBD", false, 0, "Rear seat belt buckle may not latch", "La boucle de ceinture de sécurité arrière pourrait ne pas s'enclencher",
		"On certain vehicles, a rear seat belt buckle may not latch properly. A seat belt that does not latch may not protect an occupant in a crash, increasing the risk of injury. Correction: Dealers will replace the seat belt buckle.",
		"Sur certains véhicules, une boucle de ceinture de sécurité arrière pourrait ne pas s'enclencher correctement. Une ceinture qui ne s'enclenche pas pourrait ne pas protéger l'occupant en cas de collision, ce qui augmenterait le risque de blessures. Correction : Les concessionnaires remplaceront la boucle de la ceinture de sécurité."},
	{sysSeats, "CUTV", false, 2000, "Seat belt pretensioner may cause fire", "Le prétensionneur de ceinture pourrait causer un incendie",
		"On certain vehicles, when the seat belt pretensioners deploy in a crash, they could produce excessive sparks that ignite nearby materials. A fire increases the risk of injury. Correction: Dealers will install heat-resistant covers on the pretensioners.",
		"Sur certains véhicules, le déploiement des prétensionneurs de ceinture lors d'une collision pourrait produire des étincelles excessives qui enflammeraient des matériaux à proximité. Un incendie augmente le risque de blessures. Correction : Les concessionnaires installeront des couvercles résistants à la chaleur sur les prétensionneurs."},
	{sysSeats, "CUTV", true, 0, "Seat belt anchor may not meet standard", "L'ancrage de ceinture pourrait ne pas être conforme à la norme",
		"On certain vehicles, the rear centre seat belt anchor may not meet the strength requirements of Canada Motor Vehicle Safety Standard (CMVSS) 210. In a crash, the anchor could fail, increasing the risk of injury. Correction: Dealers will reinforce the anchor.",
		"Sur certains véhicules, l'ancrage de la ceinture de sécurité du siège arrière central pourrait ne pas satisfaire aux exigences de résistance de la Norme de sécurité des véhicules automobiles du Canada (NSVAC) 210. En cas de collision, l'ancrage pourrait céder, ce qui augmenterait le risque de blessures. Correction : Les concessionnaires renforceront l'ancrage."},
	{sysElectrical, "CUTVHKM3YBDRAXN", false, 0, "Battery cable may short circuit and cause a fire", "Le câble de batterie pourrait causer un court-circuit et un incendie",
		"On certain vehicles, the positive battery cable could contact a metal bracket and short circuit. This could cause an electrical fire, increasing the risk of injury or damage to property. Correction: Dealers will inspect the cable, reposition it and add protective covering.",
		"Sur certains véhicules, le câble positif de la batterie pourrait toucher un support métallique et causer un court-circuit. Cela pourrait provoquer un incendie électrique, ce qui augmenterait le risque de blessures ou de dommages matériels. Correction : Les concessionnaires inspecteront le câble, le repositionneront et ajouteront une gaine protectrice."},
	{sysElectrical, "CUTV", false, 2012, "High-voltage battery may overheat", "La batterie haute tension pourrait surchauffer",
		"On certain vehicles, cells in the high-voltage battery could have a manufacturing defect. This could cause the battery to overheat and catch fire, even when the vehicle is parked. Correction: Dealers will inspect the battery and replace battery modules as needed. Owners are advised to park outside and away from structures until the repair is done.",
		"Sur certains véhicules, des cellules de la batterie haute tension pourraient présenter un défaut de fabrication. La batterie pourrait alors surchauffer et prendre feu, même lorsque le véhicule est stationné. Correction : Les concessionnaires inspecteront la batterie et remplaceront des modules au besoin. On recommande aux propriétaires de garer leur véhicule à l'extérieur et loin des bâtiments jusqu'à ce que la réparation soit faite."},
	{sysPowertrain, "CUTVHK", false, 0, "Transmission may shift to neutral", "La transmission pourrait passer au point mort",
		"On certain vehicles, a transmission control software error could cause the transmission to shift unexpectedly into neutral while driving. A loss of drive power increases the risk of a crash. Correction: Dealers will update the transmission control module software.",
		"Sur certains véhicules, une erreur du logiciel de commande de la transmission pourrait faire passer la transmission au point mort de façon inattendue pendant la conduite. Une perte de puissance motrice augmente le risque de collision. Correction : Les concessionnaires mettront à jour le logiciel du module de commande de la transmission."},
	{sysPowertrain, "CUTVHK", false, 0, "Vehicle may roll away when shifted to park", "Le véhicule pourrait se déplacer en position de stationnement",
		"On certain vehicles, the transmission shift cable bushing could detach. The transmission may then not be in the gear shown by the shifter, and the vehicle could roll away when the driver believes it is in park, increasing the risk of injury. Correction: Dealers will replace the shift cable bushing.",
		"Sur certains véhicules, la douille du câble de changement de vitesse pourrait se détacher. La transmission pourrait alors ne pas être dans le rapport indiqué par le levier, et le véhicule pourrait se déplacer alors que le conducteur le croit en position de stationnement, ce qui augmenterait le risque de blessures. Correction : Les concessionnaires remplaceront la douille du câble de changement de vitesse."},
	{sysPowertrain, "CUTVHK", false, 0, "Driveshaft may fracture", "L'arbre de transmission pourrait se rompre",
		"On certain vehicles, the rear driveshaft could fracture. A broken driveshaft could cause a loss of drive power or, if the parking brake is not applied, allow the vehicle to roll away, increasing the risk of a crash or injury. Correction: Dealers will replace the driveshaft.",
		"Sur certains véhicules, l'arbre de transmission arrière pourrait se rompre. Un arbre brisé pourrait entraîner une perte de puissance motrice ou, si le frein de stationnement n'est pas serré, permettre au véhicule de se déplacer, ce qui augmenterait le risque de collision ou de blessures. Correction : Les concessionnaires remplaceront l'arbre de transmission."},
	{sysPowertrain, "M3", false, 0, "Drive chain may derail", "La chaîne d'entraînement pourrait dérailler",
		"On certain motorcycles, the drive chain adjuster could loosen, allowing the chain to derail. A derailed chain could lock the rear wheel, increasing the risk of a crash. Correction: Dealers will replace the chain adjusters.",
		"Sur certaines motocyclettes, le tendeur de chaîne d'entraînement pourrait se desserrer et laisser la chaîne dérailler. Une chaîne déraillée pourrait bloquer la roue arrière, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront les tendeurs de chaîne."},
	{sysSuspension, "CUTVHK", false, 0, "Rear toe link may fracture", "La biellette de pincement arrière pourrait se rompre",
		"On certain vehicles, the rear suspension toe link could fracture. This could affect steering and cause a loss of vehicle control, increasing the risk of a crash. Correction: Dealers will replace the rear toe links.",
		"Sur certains véhicules, la biellette de pincement de la suspension arrière pourrait se rompre. Cela pourrait nuire à la direction et entraîner une perte de contrôle du véhicule, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront les biellettes de pincement arrière."},
	{sysSuspension, "CUTVHKR", false, 0, "Front lower control arm may separate", "Le bras de suspension inférieur avant pourrait se détacher",
		"On certain vehicles, the front lower control arm ball joint could separate. This could cause a loss of steering control, increasing the risk of a crash. Correction: Dealers will replace the front lower control arms.",
		"Sur certains véhicules, le joint à rotule du bras de suspension inférieur avant pourrait se détacher. Cela pourrait entraîner une perte de contrôle de la direction, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront les bras de suspension inférieurs avant."},
	{sysSuspension, "LP", false, 0, "Axle may shift or separate", "L'essieu pourrait se déplacer ou se détacher",
		"On certain trailers, the axle U-bolts may not have been tightened properly. The axle could shift or separate from the trailer, increasing the risk of a crash. Correction: Dealers will inspect and tighten the U-bolts.",
		"Sur certaines remorques, les boulons en U de l'essieu pourraient ne pas avoir été serrés correctement. L'essieu pourrait se déplacer ou se détacher de la remorque, ce qui augmenterait le risque de collision. Correction : Les concessionnaires inspecteront et serreront les boulons en U."},
	{sysSuspension, "E", false, 0, "Replacement shock absorbers may separate", "Des amortisseurs de rechange pourraient se détacher",
		"Certain replacement shock absorbers could separate at the upper mount. This could affect vehicle handling, increasing the risk of a crash. Correction: The company will replace the shock absorbers.",
		"Certains amortisseurs de rechange pourraient se détacher à la fixation supérieure. Cela pourrait nuire à la tenue de route, ce qui augmenterait le risque de collision. Correction : L'entreprise remplacera les amortisseurs."},
	{sysLights, "CUTVHKM3YLPRAXN", true, 0, "Headlamps may not meet requirements", "Les phares pourraient ne pas être conformes aux exigences",
		"On certain vehicles, the headlamps may not meet the photometric requirements of Canada Motor Vehicle Safety Standard (CMVSS) 108. Reduced lighting could make it harder for the driver to see the road and for others to see the vehicle, increasing the risk of a crash. Correction: Dealers will replace the headlamps.",
		"Sur certains véhicules, les phares pourraient ne pas satisfaire aux exigences photométriques de la Norme de sécurité des véhicules automobiles du Canada (NSVAC) 108. Un éclairage réduit pourrait empêcher le conducteur de bien voir la route et les autres usagers de voir le véhicule, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront les phares."},
	{sysLights, "CUTVHKYLPRBD", false, 0, "Tail lamps may stop working", "Les feux arrière pourraient cesser de fonctionner",
		"On certain vehicles, water could enter the tail lamp connector and cause corrosion. The tail lamps and brake lamps could stop working, reducing the vehicle's visibility to other road users and increasing the risk of a crash. Correction: Dealers will replace the connector and apply a sealant.",
		"Sur certains véhicules, de l'eau pourrait s'infiltrer dans le connecteur des feux arrière et causer de la corrosion. Les feux arrière et les feux de freinage pourraient cesser de fonctionner, ce qui réduirait la visibilité du véhicule pour les autres usagers de la route et augmenterait le risque de collision. Correction : Les concessionnaires remplaceront le connecteur et appliqueront un scellant."},
	{sysLights, "E", true, 0, "Aftermarket lamps do not meet requirements", "Des feux de rechange ne sont pas conformes aux exigences",
		"Certain aftermarket lamps may not meet the requirements of Canada Motor Vehicle Safety Standard (CMVSS) 108. Lamps that are too bright or aimed incorrectly could glare other drivers, increasing the risk of a crash. Correction: The company will replace the lamps or refund the purchase price.",
		"Certains feux de rechange pourraient ne pas satisfaire aux exigences de la Norme de sécurité des véhicules automobiles du Canada (NSVAC) 108. Des feux trop intenses ou mal orientés pourraient éblouir les autres conducteurs, ce qui augmenterait le risque de collision. Correction : L'entreprise remplacera les feux ou remboursera le prix d'achat."},
	{sysTires, "W", false, 0, "Tread may separate", "La bande de roulement pourrait se séparer",
		"Certain tires could develop a separation of the tread from the belts. Tread separation could cause a sudden loss of tire pressure and of vehicle control, increasing the risk of a crash. Correction: Dealers will replace the affected tires free of charge.",
		"Certains pneus pourraient présenter une séparation de la bande de roulement et des ceintures. Une telle séparation pourrait entraîner une perte soudaine de pression et de contrôle du véhicule, ce qui augmenterait le risque de collision. Correction : Les détaillants remplaceront gratuitement les pneus touchés."},
	{sysTires, "W", true, 0, "Tires may be missing required markings", "Des inscriptions obligatoires pourraient manquer sur les pneus",
		"Certain tires may be missing the required tire identification number on one sidewall, which does not comply with the Motor Vehicle Tire Safety Regulations. Without it, owners may not be notified of future recalls. Correction: Dealers will replace the affected tires.",
		"Il pourrait manquer le numéro d'identification obligatoire sur un flanc de certains pneus, ce qui n'est pas conforme au Règlement sur la sécurité des pneus de véhicule automobile. Sans ce numéro, les propriétaires pourraient ne pas être avisés de rappels futurs. Correction : Les détaillants remplaceront les pneus touchés."},
	{sysTires, "CUTVLP", false, 0, "Original-equipment tires may be damaged", "Les pneus d'origine pourraient être endommagés",
		"On certain vehicles, the original-equipment tires may have been damaged during mounting. A damaged tire bead could cause a sudden loss of air pressure, increasing the risk of a crash. Correction: Dealers will inspect the tires and replace them as needed.",
		"Sur certains véhicules, les pneus d'origine pourraient avoir été endommagés lors du montage. Un talon de pneu endommagé pourrait entraîner une perte soudaine de pression, ce qui augmenterait le risque de collision. Correction : Les concessionnaires inspecteront les pneus et les remplaceront au besoin."},
	{sysStructure, "CUTVHKBD", false, 0, "Frame may corrode", "Le cadre pourrait se corroder",
		"On certain vehicles, the frame could corrode excessively in areas exposed to road salt. A weakened frame could break, and a component such as the fuel tank or the spare tire could separate, increasing the risk of a crash. Correction: Dealers will inspect the frame, apply a corrosion-resistant compound, and repair or replace the frame as needed.",
		"Sur certains véhicules, le cadre pourrait se corroder de façon excessive aux endroits exposés au sel de voirie. Un cadre affaibli pourrait se rompre, et une pièce comme le réservoir de carburant ou la roue de secours pourrait se détacher, ce qui augmenterait le risque de collision. Correction : Les concessionnaires inspecteront le cadre, appliqueront un produit anticorrosion et répareront ou remplaceront le cadre au besoin."},
	{sysStructure, "LPE", false, 0, "Coupler or hitch may crack", "Le coupleur ou l'attelage pourrait se fissurer",
		"The trailer coupler or hitch could crack under load. The trailer could then separate from the towing vehicle, increasing the risk of a crash. Correction: The company will replace the affected parts.",
		"Le coupleur de la remorque ou l'attelage pourrait se fissurer sous la charge. La remorque pourrait alors se détacher du véhicule tracteur, ce qui augmenterait le risque de collision. Correction : L'entreprise remplacera les pièces touchées."},
	{sysStructure, "R", false, 0, "Entry step may collapse", "La marche d'entrée pourrait s'affaisser",
		"On certain motor homes, the electric entry step could fail to retract or could collapse under load. This could cause a fall, increasing the risk of injury. Correction: Dealers will replace the step assembly.",
		"Sur certaines autocaravanes, la marche d'entrée électrique pourrait ne pas se rétracter ou s'affaisser sous une charge. Cela pourrait entraîner une chute, ce qui augmenterait le risque de blessures. Correction : Les concessionnaires remplaceront l'ensemble de la marche."},
	{sysStructure, "E", false, 0, "Roof box may detach", "Le coffre de toit pourrait se détacher",
		"Certain roof cargo boxes may not lock securely to the crossbars. The box could detach while driving and strike other road users, increasing the risk of a crash. Correction: The company will send owners a free replacement mounting kit.",
		"Certains coffres de toit pourraient ne pas se fixer solidement aux barres transversales. Le coffre pourrait se détacher pendant la conduite et heurter d'autres usagers de la route, ce qui augmenterait le risque de collision. Correction : L'entreprise enverra gratuitement aux propriétaires une nouvelle trousse de fixation."},
	{sysStructure, "BD", false, 0, "Wheelchair lift may move unexpectedly", "La plateforme élévatrice pourrait se déplacer de façon inattendue",
		"On certain buses, the wheelchair lift could move unexpectedly if the control is activated while the lift is stowed. A person near the lift could be injured. Correction: Dealers will install an interlock on the lift control.",
		"Sur certains autobus, la plateforme élévatrice pour fauteuils roulants pourrait se déplacer de façon inattendue si la commande est activée pendant qu'elle est rangée. Une personne à proximité pourrait être blessée. Correction : Les concessionnaires installeront un dispositif de verrouillage sur la commande de la plateforme."},
	{sysEngine, "CUTVHKM3Y", false, 0, "Engine may stall", "Le moteur pourrait caler",
		"On certain vehicles, the engine control module software could cause the engine to stall while driving. A stall could cause a loss of power-assisted steering and braking, increasing the risk of a crash. Correction: Dealers will update the engine control module software.",
		"Sur certains véhicules, le logiciel du module de commande du moteur pourrait faire caler le moteur pendant la conduite. Un calage pourrait entraîner la perte de l'assistance de la direction et des freins, ce qui augmenterait le risque de collision. Correction : Les concessionnaires mettront à jour le logiciel du module de commande du moteur."},
	{sysEngine, "CUTVHKM3", false, 0, "Oil leak may cause a fire", "Une fuite d'huile pourrait causer un incendie",
		"On certain vehicles, the engine oil cooler line could leak. Oil leaking onto hot exhaust components could start a fire, increasing the risk of injury. Correction: Dealers will replace the oil cooler lines.",
		"Sur certains véhicules, la conduite du refroidisseur d'huile moteur pourrait fuir. De l'huile qui s'écoule sur des pièces chaudes de l'échappement pourrait provoquer un incendie, ce qui augmenterait le risque de blessures. Correction : Les concessionnaires remplaceront les conduites du refroidisseur d'huile."},
	{sysWheels, "CUTVHKLP", false, 0, "Wheel studs may fracture", "Les goujons de roue pourraient se rompre",
		"On certain vehicles, the wheel studs could fracture. If enough studs break, the wheel could separate from the vehicle, increasing the risk of a crash. Correction: Dealers will replace the wheel studs and lug nuts.",
		"Sur certains véhicules, les goujons de roue pourraient se rompre. Si suffisamment de goujons se brisent, la roue pourrait se détacher du véhicule, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront les goujons et les écrous de roue."},
	{sysWheels, "M3Y", false, 0, "Front wheel may crack", "La roue avant pourrait se fissurer",
		"On certain motorcycles, the cast front wheel could crack. A cracked wheel could cause a loss of tire pressure and of control, increasing the risk of a crash. Correction: Dealers will replace the front wheel.",
		"Sur certaines motocyclettes, la roue avant moulée pourrait se fissurer. Une roue fissurée pourrait entraîner une perte de pression du pneu et une perte de contrôle, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront la roue avant."},
	{sysVisual, "CUTVHK", false, 0, "Windshield wipers may stop working", "Les essuie-glaces pourraient cesser de fonctionner",
		"On certain vehicles, the windshield wiper motor could fail. A loss of wiper function could reduce the driver's visibility in bad weather, increasing the risk of a crash. Correction: Dealers will replace the wiper motor.",
		"Sur certains véhicules, le moteur des essuie-glaces pourrait tomber en panne. La perte des essuie-glaces pourrait réduire la visibilité du conducteur par mauvais temps, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront le moteur des essuie-glaces."},
	{sysVisual, "CUTV", true, 2014, "Rearview camera image may not display", "L'image de la caméra de recul pourrait ne pas s'afficher",
		"On certain vehicles, the rearview camera image may not display when the vehicle is in reverse. This does not comply with Canada Motor Vehicle Safety Standard (CMVSS) 111, and reduced rear visibility increases the risk of a crash. Correction: Dealers will update the radio software.",
		"Sur certains véhicules, l'image de la caméra de recul pourrait ne pas s'afficher lorsque le véhicule est en marche arrière. Cela n'est pas conforme à la Norme de sécurité des véhicules automobiles du Canada (NSVAC) 111, et une visibilité arrière réduite augmente le risque de collision. Correction : Les concessionnaires mettront à jour le logiciel de la radio."},
	{sysStructure, "CUTVR", false, 0, "Hood may open while driving", "Le capot pourrait s'ouvrir pendant la conduite",
		"On certain vehicles, the secondary hood latch could corrode and bind. If the primary latch is released, the hood could open unexpectedly while driving and block the driver's view, increasing the risk of a crash. Correction: Dealers will replace the hood latch.",
		"Sur certains véhicules, le loquet secondaire du capot pourrait se corroder et se coincer. Si le loquet principal est déverrouillé, le capot pourrait s'ouvrir de façon inattendue pendant la conduite et bloquer la vue du conducteur, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront le loquet du capot."},
	{sysStructure, "CUTV", false, 0, "Rear door may open while driving", "Une portière arrière pourrait s'ouvrir pendant la conduite",
		"On certain vehicles, a rear door latch may not lock properly. The door could open while the vehicle is moving, increasing the risk of injury to an occupant. Correction: Dealers will replace the door latches.",
		"Sur certains véhicules, le loquet d'une portière arrière pourrait ne pas se verrouiller correctement. La portière pourrait s'ouvrir pendant que le véhicule roule, ce qui augmenterait le risque de blessures pour un occupant. Correction : Les concessionnaires remplaceront les loquets des portières."},
	{sysStructure, "BD", true, 0, "Emergency exit window may be hard to open", "La fenêtre d'issue de secours pourrait être difficile à ouvrir",
		"On certain buses, an emergency exit window may be difficult to open, which does not comply with Canada Motor Vehicle Safety Standard (CMVSS) 217. In an emergency, passengers could have trouble leaving the bus, increasing the risk of injury. Correction: Dealers will adjust or replace the window latches.",
		"Sur certains autobus, une fenêtre d'issue de secours pourrait être difficile à ouvrir, ce qui n'est pas conforme à la Norme de sécurité des véhicules automobiles du Canada (NSVAC) 217. En cas d'urgence, les passagers pourraient avoir de la difficulté à évacuer l'autobus, ce qui augmenterait le risque de blessures. Correction : Les concessionnaires régleront ou remplaceront les loquets des fenêtres."},
	{sysLabel, "CUTVHKLPRM3YBDAXN", true, 0, "Tire and loading label may be incorrect", "L'étiquette des pneus et de la charge pourrait être inexacte",
		"On certain vehicles, the tire and loading information label may show incorrect information. This does not comply with Canada Motor Vehicle Safety Standard (CMVSS) 110, and overloading the vehicle could increase the risk of a crash. Correction: Dealers will install a corrected label.",
		"Sur certains véhicules, l'étiquette de renseignements sur les pneus et la charge pourrait comporter des renseignements erronés. Cela n'est pas conforme à la Norme de sécurité des véhicules automobiles du Canada (NSVAC) 110, et une surcharge du véhicule pourrait augmenter le risque de collision. Correction : Les concessionnaires poseront une étiquette corrigée."},
	{sysLabel, "S", true, 0, "Required French labels may be missing", "Des étiquettes obligatoires en français pourraient manquer",
		"Certain child seats may be missing required labels in French, which does not comply with the Motor Vehicle Restraint Systems and Booster Seats Safety Regulations. Without correct labels, the seat could be installed or used incorrectly, increasing the risk of injury to a child in a crash. Correction: The manufacturer will send owners corrected labels.",
		"Il pourrait manquer certaines étiquettes obligatoires en français sur certains sièges d'enfant, ce qui n'est pas conforme au Règlement sur la sécurité des ensembles de retenue et des sièges d'appoint. Sans étiquettes adéquates, le siège pourrait être installé ou utilisé incorrectement, ce qui augmenterait le risque de blessures pour l'enfant en cas de collision. Correction : Le fabricant enverra aux propriétaires des étiquettes corrigées."},
	{sysSeats, "S", false, 0, "Harness may loosen", "Le harnais pourrait se relâcher",
		"On certain child seats, the harness adjuster could allow the harness to loosen. A loose harness may not properly restrain a child in a crash, increasing the risk of injury. Correction: The manufacturer will send owners a free replacement harness adjuster.",
		"Sur certains sièges d'enfant, le dispositif de réglage du harnais pourrait laisser le harnais se relâcher. Un harnais relâché pourrait ne pas retenir correctement l'enfant en cas de collision, ce qui augmenterait le risque de blessures. Correction : Le fabricant enverra gratuitement aux propriétaires un nouveau dispositif de réglage du harnais."},
	{sysSeats, "S", false, 0, "Harness buckle may be hard to release", "La boucle du harnais pourrait être difficile à détacher",
		"On certain child seats, the harness buckle could become difficult to unlatch. In an emergency, this could delay removing the child from the seat, increasing the risk of injury. Correction: The manufacturer will send owners a free replacement buckle.",
		"Sur certains sièges d'enfant, la boucle du harnais pourrait devenir difficile à détacher. En cas d'urgence, cela pourrait retarder le retrait de l'enfant du siège, ce qui augmenterait le risque de blessures. Correction : Le fabricant enverra gratuitement aux propriétaires une boucle de remplacement."},
	{sysSeats, "S", false, 0, "Seat base may crack", "La base du siège pourrait se fissurer",
		"On certain infant car seats, the plastic base could crack. A cracked base may not hold the seat in place in a crash, increasing the risk of injury to the child. Correction: The manufacturer will send owners a replacement base.",
		"Sur certains sièges d'auto pour bébé, la base en plastique pourrait se fissurer. Une base fissurée pourrait ne pas maintenir le siège en place en cas de collision, ce qui augmenterait le risque de blessures pour l'enfant. Correction : Le fabricant enverra aux propriétaires une base de remplacement."},
	{sysOther, "CUTVHKRBD", false, 0, "Exhaust leak may let carbon monoxide in", "Une fuite d'échappement pourrait laisser entrer du monoxyde de carbone",
		"On certain vehicles, the exhaust pipe could crack near the manifold. Exhaust gases, including carbon monoxide, could enter the passenger compartment, increasing the risk of injury. Correction: Dealers will replace the exhaust pipe.",
		"Sur certains véhicules, le tuyau d'échappement pourrait se fissurer près du collecteur. Des gaz d'échappement, y compris du monoxyde de carbone, pourraient pénétrer dans l'habitacle, ce qui augmenterait le risque de blessures. Correction : Les concessionnaires remplaceront le tuyau d'échappement."},
	{sysAccessories, "CUTV", false, 0, "Block heater cord may overheat", "Le cordon du chauffe-moteur pourrait surchauffer",
		"On certain vehicles, the engine block heater cord could be damaged by contact with the engine. A damaged cord could overheat when plugged in and cause a fire, increasing the risk of injury or damage to property. Correction: Dealers will replace the block heater cord and add a protective clip.",
		"Sur certains véhicules, le cordon du chauffe-moteur pourrait être endommagé par le contact avec le moteur. Un cordon endommagé pourrait surchauffer une fois branché et provoquer un incendie, ce qui augmenterait le risque de blessures ou de dommages matériels. Correction : Les concessionnaires remplaceront le cordon du chauffe-moteur et ajouteront une attache de protection."},
	{sysAccessories, "RP", false, 0, "Awning may extend while driving", "L'auvent pourrait se déployer pendant la conduite",
		"On certain recreational vehicles, the power awning could extend while the vehicle is moving. An extended awning could strike other road users or objects, increasing the risk of a crash. Correction: Dealers will update the awning control software.",
		"Sur certains véhicules récréatifs, l'auvent électrique pourrait se déployer pendant que le véhicule roule. Un auvent déployé pourrait heurter d'autres usagers de la route ou des objets, ce qui augmenterait le risque de collision. Correction : Les concessionnaires mettront à jour le logiciel de commande de l'auvent."},
	{sysHeater, "CUTVHKBD", true, 0, "Windshield defroster may not meet standard", "Le dégivreur de pare-brise pourrait ne pas être conforme à la norme",
		"On certain vehicles, the windshield defrosting system may not clear the windshield as quickly as required by Canada Motor Vehicle Safety Standard (CMVSS) 103. Poor visibility in cold weather could increase the risk of a crash. Correction: Dealers will update the climate control software.",
		"Sur certains véhicules, le système de dégivrage du pare-brise pourrait ne pas dégager le pare-brise aussi rapidement que l'exige la Norme de sécurité des véhicules automobiles du Canada (NSVAC) 103. Une mauvaise visibilité par temps froid pourrait augmenter le risque de collision. Correction : Les concessionnaires mettront à jour le logiciel de commande de la climatisation."},
	{sysEngine, "AXN", false, 0, "Throttle may stick", "L'accélérateur pourrait rester coincé",
		"On certain vehicles, the throttle cable could bind and the throttle could stay open when released. The vehicle could keep moving when the rider expects it to slow down, increasing the risk of a crash. Correction: Dealers will replace the throttle cable.",
		"Sur certains véhicules, le câble d'accélérateur pourrait se coincer et l'accélérateur pourrait rester ouvert une fois relâché. Le véhicule pourrait continuer d'avancer alors que le conducteur s'attend à ce qu'il ralentisse, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront le câble d'accélérateur."},
	{sysSuspension, "AX", false, 0, "Front A-arm may crack", "Le bras triangulaire avant pourrait se fissurer",
		"On certain vehicles, the front upper A-arm could crack. A broken A-arm could cause a loss of control, increasing the risk of a crash. Correction: Dealers will replace the front upper A-arms.",
		"Sur certains véhicules, le bras triangulaire supérieur avant pourrait se fissurer. Un bras brisé pourrait entraîner une perte de contrôle, ce qui augmenterait le risque de collision. Correction : Les concessionnaires remplaceront les bras triangulaires supérieurs avant."},
}

// comment writes the defect's comment as Transport Canada does, in French
// when fr is set: one paragraph, "… Correction: …", or, headed (as most
// recalls since 2019 are), three paragraphs under Issue, Safety Risk and
// Corrective Actions, each heading and paragraph ending in a space before
// its line break, as the database writes them. brand is who tells owners.
func (d *defect) comment(fr, headed bool, brand string) string {
	text, sep := d.commentEN, " Correction: "
	heads := [3]string{"Issue: \n", " \n\nSafety Risk: \n", " \n\nCorrective Actions: \n"}
	notify := map[string]string{
		"Dealers will ":          brand + " will notify owners by mail and instruct you to take your vehicle to a dealer to ",
		"The company will ":      brand + " will ",
		"The manufacturer will ": brand + " will ",
	}
	if fr {
		text, sep = d.commentFR, " Correction : "
		heads = [3]string{"Problème : \n", " \n\nRisques pour la sécurité : \n", " \n\nMesures correctives : \n"}
		notify = map[string]string{
			"Les concessionnaires ": brand + " avisera les propriétaires par la poste. Les concessionnaires ",
			"Les détaillants ":      brand + " avisera les propriétaires par la poste. Les détaillants ",
			"L'entreprise ":         brand + " ",
			"Le fabricant ":         brand + " ",
		}
	}
	if !headed {
		return text
	}
	body, action, _ := strings.Cut(text, sep)
	for prefix, with := range notify {
		if rest, ok := strings.CutPrefix(action, prefix); ok {
			action = with + rest
			break
		}
	}
	issue, risk, ok := strings.Cut(body, ". ")
	if !ok {
		return heads[0] + body + heads[2] + action
	}
	return heads[0] + issue + "." + heads[1] + risk + heads[2] + action
}
